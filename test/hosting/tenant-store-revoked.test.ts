import test from 'ava';
import { join } from 'node:path';
import { generateApiKey } from '../../src/hosting/auth/api-key.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import { emptyTenantsFile, writeTenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { hostingFolder } from '../helpers/hosting.js';

/** A file with tenants alpha (keys a1, a2) and beta (key b1). */
function twoTenants() {
  const content = emptyTenantsFile();
  const [a1, a2, b1] = [generateApiKey(), generateApiKey(), generateApiKey()];
  const entry = (key: ReturnType<typeof generateApiKey>) => ({ id: key.id, hash: key.hash, createdAt: new Date().toISOString() });
  content.tenants['alpha'] = { keys: [entry(a1), entry(a2)] };
  content.tenants['beta'] = { keys: [entry(b1)] };
  return { content, ids: { a1: a1.id, a2: a2.id, b1: b1.id } };
}

test('keys-revoked names the keys that stopped working (revoked or dropped), once, and not those of a removed tenant', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  const { content, ids } = twoTenants();
  await writeTenantsFile(file, content);
  const store = await TenantStore.open({ file, pollMs: 60_000 });
  t.teardown(() => store.close());
  const seen: string[][] = [];
  const removed: string[] = [];
  store.on('keys-revoked', (revoked) => seen.push(revoked));
  store.on('tenant-removed', (name) => removed.push(name));

  content.tenants['alpha']!.keys[0]!.revokedAt = new Date().toISOString();
  await writeTenantsFile(file, content);
  await store.reload();
  t.deepEqual(seen, [[ids.a1]]);

  // Already revoked: not announced again. A key dropped from a tenant that stays is announced; a removed tenant's key is not.
  content.tenants['alpha']!.keys.splice(1, 1);
  delete content.tenants['beta'];
  await writeTenantsFile(file, content);
  await store.reload();
  t.deepEqual(seen, [[ids.a1], [ids.a2]]);
  t.deepEqual(removed, ['beta']);
});
