import test from 'ava';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdminHandler, type AdminSessionInfo } from '../../src/hosting/admin/admin-handler.js';
import { readAdminKeyFile } from '../../src/hosting/admin/admin-key.js';
import type { HostingEvent } from '../../src/hosting/operations/hosting-events.js';
import { runCli } from '../helpers/cli.js';

const ADMIN_KEY = 'a'.repeat(24) + 'dmin-key-0123456789';
const TENANT_KEY = 'tc_abcdef123456_' + 's'.repeat(32);

/** A server's live sessions, in memory: what the tenants server hands the admin API. */
function sessionTable() {
  const live = new Map<string, AdminSessionInfo>([
    ['s-acme-1', { id: 's-acme-1', tenant: 'acme', subject: 'k1', ageMs: 65_000, calls: 12, memoryBytes: 13_107_200, runtime: 'runsc' }],
    ['s-acme-2', { id: 's-acme-2', tenant: 'acme', subject: 'k2', ageMs: 5_000, calls: 0, runtime: 'runc' }],
    ['s-globex-1', { id: 's-globex-1', tenant: 'globex', subject: 'alice', ageMs: 7_300_000, calls: 3 }],
  ]);
  return {
    live,
    list: (tenant?: string) => [...live.values()].filter((s) => tenant === undefined || s.tenant === tenant),
    close: async (id: string) => live.delete(id),
  };
}

async function start(t: { teardown(fn: () => Promise<void> | void): void }) {
  const sessions = sessionTable();
  const events: HostingEvent[] = [];
  const handler = createAdminHandler({
    adminKey: ADMIN_KEY,
    sessions,
    observer: { record: (event) => void events.push(event) },
    isTenantKey: (key) => key === TENANT_KEY,
  });
  const server = createServer((req, res) => void handler(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-admin-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const keyFile = join(dir, 'admin.key');
  await writeFile(keyFile, `${ADMIN_KEY}\n`, { mode: 0o600 });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sessions, events, keyFile, dir };
}

const as = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });

test("GET /admin/sessions lists every live session, or one tenant's, and is audited", async (t) => {
  const { url, events } = await start(t);
  const all = (await (await fetch(`${url}/admin/sessions`, as(ADMIN_KEY))).json()) as { sessions: AdminSessionInfo[] };
  t.deepEqual(
    all.sessions.map((s) => s.id),
    ['s-acme-1', 's-acme-2', 's-globex-1'],
  );
  const acme = (await (await fetch(`${url}/admin/sessions?tenant=acme`, as(ADMIN_KEY))).json()) as { sessions: AdminSessionInfo[] };
  t.deepEqual(
    acme.sessions.map((s) => s.id),
    ['s-acme-1', 's-acme-2'],
  );
  t.deepEqual(events, [
    { event: 'admin', action: 'list_sessions' },
    { event: 'admin', action: 'list_sessions', tenant: 'acme' },
  ]);
});

test('POST /admin/sessions/<id>/close closes it, names its tenant in the audit, and 404s the second time', async (t) => {
  const { url, sessions, events } = await start(t);
  const first = await fetch(`${url}/admin/sessions/s-globex-1/close`, { method: 'POST', ...as(ADMIN_KEY) });
  t.is(first.status, 200);
  t.false(sessions.live.has('s-globex-1'));
  const again = await fetch(`${url}/admin/sessions/s-globex-1/close`, { method: 'POST', ...as(ADMIN_KEY) });
  t.is(again.status, 404);
  t.deepEqual(events, [
    { event: 'admin', action: 'close_session', target: 's-globex-1', tenant: 'globex' },
    { event: 'admin', action: 'close_session_not_found', target: 's-globex-1' },
  ]);
});

test('no key, a wrong key and a tenant key all get the same 401, each audited without the key', async (t) => {
  const { url, events, sessions } = await start(t);
  for (const init of [{}, as('b'.repeat(40)), as(TENANT_KEY)]) {
    const response = await fetch(`${url}/admin/sessions/s-acme-1/close`, { method: 'POST', ...init });
    t.is(response.status, 401);
    t.deepEqual(await response.json(), { error: 'unauthorized' });
  }
  t.true(sessions.live.has('s-acme-1'));
  t.deepEqual(
    events.map((e) => (e.event === 'auth_failure' ? e.reason : e.event)),
    ['admin_missing_key', 'admin_wrong_key', 'admin_wrong_key'],
  );
  t.false(JSON.stringify(events).includes(TENANT_KEY));
});

test('wrong methods, unknown paths and malformed ids are refused', async (t) => {
  const { url } = await start(t);
  t.is((await fetch(`${url}/admin/sessions`, { method: 'POST', ...as(ADMIN_KEY) })).status, 405);
  t.is((await fetch(`${url}/admin/sessions/s-acme-1/close`, as(ADMIN_KEY))).status, 405);
  t.is((await fetch(`${url}/admin/other`, as(ADMIN_KEY))).status, 404);
  t.is((await fetch(`${url}/admin/sessions/%E0%A4%A/close`, { method: 'POST', ...as(ADMIN_KEY) })).status, 400);
});

test('an admin key that is short, tc_-shaped or a tenant key is refused at start', (t) => {
  const base = { sessions: sessionTable(), observer: { record: () => {} } };
  t.throws(() => createAdminHandler({ ...base, adminKey: 'short' }), { message: /adminKey must be at least 32/ });
  t.throws(() => createAdminHandler({ ...base, adminKey: TENANT_KEY }), { message: /tenant/ });
  t.throws(() => createAdminHandler({ ...base, adminKey: ADMIN_KEY, isTenantKey: () => true }), {
    instanceOf: TypeError,
    message: 'createAdminHandler: options.adminKey must not be a tenant key: the admin key must be its own',
  });
});

test('an admin key file readable by others is refused, naming the file', async (t) => {
  const { keyFile } = await start(t);
  t.is(await readAdminKeyFile(keyFile), ADMIN_KEY);
  await chmod(keyFile, 0o644);
  const error = await t.throwsAsync(readAdminKeyFile(keyFile));
  t.is((error as { code?: string }).code, 'invalid_input');
  t.regex(error!.message, /admin\.key.*chmod 600/);
});

test('toolcell hosting sessions prints a table, or JSON, for all or one tenant', async (t) => {
  const { url, keyFile } = await start(t);
  const table = await runCli(['hosting', 'sessions', '--server', `${url}/mcp`, '--admin-key-file', keyFile]);
  t.is(table.code, 0, table.stderr);
  t.deepEqual(table.stdout.split('\n'), [
    'SESSION     TENANT  SUBJECT  RUNTIME  AGE    CALLS  MEMORY',
    's-acme-1    acme    k1       runsc    1m05s  12     12.5 MiB',
    's-acme-2    acme    k2       runc     5s     0      -',
    's-globex-1  globex  alice    -        2h01m  3      -',
    '',
  ]);
  const json = await runCli(['hosting', 'sessions', '--tenant', 'globex', '--json', '--server', url, '--admin-key-file', keyFile]);
  t.is(json.code, 0, json.stderr);
  t.deepEqual(JSON.parse(json.stdout), [{ id: 's-globex-1', tenant: 'globex', subject: 'alice', ageMs: 7_300_000, calls: 3 }]);
});

test('toolcell hosting close closes a session; an unknown one and a wrong key fail with admin_request_failed', async (t) => {
  const { url, keyFile, sessions, dir } = await start(t);
  const closed = await runCli(['hosting', 'close', 's-acme-2', '--server', url, '--admin-key-file', keyFile]);
  t.is(closed.code, 0, closed.stderr);
  t.is(closed.stdout, 'Closed session s-acme-2.\n');
  t.false(sessions.live.has('s-acme-2'));
  const unknown = await runCli(['hosting', 'close', 's-acme-2', '--server', url, '--admin-key-file', keyFile]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /No live session s-acme-2.*\[admin_request_failed\]/);
  const wrongFile = join(dir, 'wrong.key');
  await writeFile(wrongFile, 'c'.repeat(40), { mode: 0o600 });
  const wrong = await runCli(['hosting', 'close', 's-acme-1', '--server', url, '--admin-key-file', wrongFile]);
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /refused the admin key.*\[admin_request_failed\]/);
  const missing = await runCli(['hosting', 'sessions', '--server', url, '--admin-key-file', join(dir, 'none')]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /\[invalid_input\]/);
});
