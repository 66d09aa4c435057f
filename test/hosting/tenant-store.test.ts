import test from 'ava';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateApiKey } from '../../src/hosting/auth/api-key.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import { emptyTenantsFile, writeTenantsFile, type TenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { hostingFolder } from '../helpers/hosting.js';

function fileWith(names: string[]): { content: TenantsFile; ids: string[] } {
  const content = emptyTenantsFile();
  const ids: string[] = [];
  for (const name of names) {
    const key = generateApiKey();
    ids.push(key.id);
    content.tenants[name] = { keys: [{ id: key.id, hash: key.hash, createdAt: new Date().toISOString() }], limits: { sessions: 2 } };
  }
  return { content, ids };
}

test('a change to the file is picked up without a call, and a removed tenant is announced', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  const { content, ids } = fileWith(['alpha', 'beta']);
  await writeTenantsFile(file, content);
  const store = await TenantStore.open({ file, pollMs: 100 });
  t.teardown(() => store.close());
  t.is(store.tenant('alpha')?.limits.sessions, 2);
  t.like(store.findKey(ids[1]!), { tenant: 'beta', revoked: false });
  const removed = once(store, 'tenant-removed');
  delete content.tenants['beta'];
  content.tenants['alpha']!.keys[0]!.revokedAt = new Date().toISOString();
  await writeTenantsFile(file, content);
  t.deepEqual(await removed, ['beta']);
  t.is(store.findKey(ids[1]!), undefined);
  t.like(store.findKey(ids[0]!), { tenant: 'alpha', revoked: true });
});

test('a bad edit keeps the last good state and is logged once', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  const { content } = fileWith(['alpha']);
  await writeTenantsFile(file, content);
  const lines: string[] = [];
  const store = await TenantStore.open({ file, pollMs: 50, onLog: (line) => lines.push(line) });
  t.teardown(() => store.close());
  await writeFile(file, '{"version": 1, "tenants": {"alpha": {"keys": "oops"}}}');
  await store.reload();
  await store.reload();
  // Let the poll and the watcher see it too.
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(lines.length, 1);
  t.regex(lines[0]!, new RegExp(`Tenants file ${file}: tenants\\.alpha\\.keys .*keeping the tenants as they were`));
  t.truthy(store.tenant('alpha'));
  // A good edit after it applies again.
  const reloaded = once(store, 'reloaded');
  await writeTenantsFile(file, fileWith(['gamma']).content);
  await reloaded;
  t.truthy(store.tenant('gamma'));
  t.is(store.tenant('alpha'), undefined);
});
