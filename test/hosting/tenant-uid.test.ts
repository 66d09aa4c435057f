import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assignTenantUids, TENANT_UID_FIRST, TENANT_UID_LAST } from '../../src/hosting/tenants/tenant-uid.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import { parseTenantsFile, type TenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { runCli } from '../helpers/cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

/** A tenant's uid: its own, stable across restarts, never a removed tenant's (tenant-uid.ts). */

const KEY = { id: 'aaaaaaaaaaaa', hash: 'a'.repeat(64), createdAt: '2026-01-01T00:00:00.000Z' };

async function uidsIn(file: string): Promise<{ nextUid?: number; tenants: Record<string, number | undefined> }> {
  const content = JSON.parse(await readFile(file, 'utf8')) as TenantsFile;
  return {
    ...(content.nextUid !== undefined ? { nextUid: content.nextUid } : {}),
    tenants: Object.fromEntries(Object.entries(content.tenants).map(([name, entry]) => [name, entry.uid])),
  };
}

test('tenant add gives each new tenant the next uid, keeps a tenant its uid when it adds a key, and never gives a removed tenant’s uid again', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  await addTenant(file, 'acme');
  await addTenant(file, 'bolt');
  t.deepEqual(await uidsIn(file), { nextUid: TENANT_UID_FIRST + 2, tenants: { acme: TENANT_UID_FIRST, bolt: TENANT_UID_FIRST + 1 } });
  await addTenant(file, 'acme');
  t.is((await uidsIn(file)).tenants['acme'], TENANT_UID_FIRST, 'a second key keeps the uid');
  t.is((await runCli(['tenant', 'remove', 'bolt', '--tenants', file])).code, 0);
  const added = await runCli(['tenant', 'add', 'core', '--tenants', file]);
  t.regex(added.stderr, new RegExp(`created tenant core \\(key id [a-z0-9]{12}, uid ${TENANT_UID_FIRST + 2}\\)`));
  t.deepEqual(
    await uidsIn(file),
    { nextUid: TENANT_UID_FIRST + 3, tenants: { acme: TENANT_UID_FIRST, core: TENANT_UID_FIRST + 2 } },
    "bolt's uid is not reused",
  );
  const list = await runCli(['tenant', 'list', '--json', '--tenants', file]);
  t.like(JSON.parse(list.stdout), {
    tenants: [
      { name: 'acme', uid: TENANT_UID_FIRST },
      { name: 'core', uid: TENANT_UID_FIRST + 2 },
    ],
  });
});

test('assignTenantUids: hand-written uids move the counter past them; the same file gives the same uids; the range has an end', (t) => {
  const file = { tenants: { a: {}, b: { uid: TENANT_UID_FIRST + 10 }, c: {} } as Record<string, { uid?: number }> };
  const copy = structuredClone(file);
  t.true(assignTenantUids(file));
  t.deepEqual(file, {
    nextUid: TENANT_UID_FIRST + 13,
    tenants: { a: { uid: TENANT_UID_FIRST + 11 }, b: { uid: TENANT_UID_FIRST + 10 }, c: { uid: TENANT_UID_FIRST + 12 } },
  });
  t.true(assignTenantUids(copy));
  t.deepEqual(copy, file, 'deterministic: the CLI and a server agree');
  t.false(assignTenantUids(file), 'nothing left to give');
  t.throws(() => assignTenantUids({ nextUid: TENANT_UID_LAST + 1, tenants: { late: {} } }), { instanceOf: RangeError, message: /no tenant uid is left/ });
});

test('two tenants with one uid, or a uid outside the range, are refused when the file is read', (t) => {
  const base = { version: 1, tenants: { a: { uid: TENANT_UID_FIRST, keys: [KEY] }, b: { uid: TENANT_UID_FIRST, keys: [{ ...KEY, id: 'bbbbbbbbbbbb' }] } } };
  t.throws(() => parseTenantsFile('t.json', base), { message: "Tenants file t.json: tenants.b.uid must not be tenant a's uid too" });
  t.throws(() => parseTenantsFile('t.json', { version: 1, tenants: { a: { uid: 0, keys: [KEY] } } }), { message: /tenants\.a\.uid/ });
  t.throws(() => parseTenantsFile('t.json', { version: 1, tenants: { a: { uid: 1000, keys: [KEY] } } }), { message: /tenants\.a\.uid/ });
});

test('a server reading tenants without a uid (written by hand, or before tenants had one) records theirs in the file; a restart finds the same', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  await writeFile(file, JSON.stringify({ version: 1, tenants: { old: { keys: [KEY] }, older: { keys: [{ ...KEY, id: 'bbbbbbbbbbbb' }] } } }), { mode: 0o600 });
  const logs: string[] = [];
  const first = await TenantStore.open({ file, onLog: (line) => logs.push(line) });
  const uids = { old: first.tenant('old')!.uid, older: first.tenant('older')!.uid };
  first.close();
  t.deepEqual(uids, { old: TENANT_UID_FIRST, older: TENANT_UID_FIRST + 1 });
  t.deepEqual(await uidsIn(file), { nextUid: TENANT_UID_FIRST + 2, tenants: uids }, 'recorded in the file');
  t.regex(logs.join('\n'), /recorded tenant uids/);
  const again = await TenantStore.open({ file });
  t.deepEqual({ old: again.tenant('old')!.uid, older: again.tenant('older')!.uid }, uids, 'the same after a restart');
  again.close();
});
