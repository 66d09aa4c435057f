/**
 * Clients that leave without ending their session (the MCP Inspector's CLI
 * never sends DELETE) no longer lock their tenant out: a session with no
 * request and no open event stream for abandonedSeconds is closed and
 * audited, while a client that is still there (its SDK keeps the event
 * stream open) keeps its session however quiet it is. The `sessions`
 * refusal says how a tenant sees and closes its sessions itself. Real
 * Docker, real HTTP, the SDK client (in another process for the clients
 * that leave).
 */
import anyTest from 'ava';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, connectTenant, hostingFolder, leaveWithoutClosing, listToolsMessage, post, startHosting } from '../helpers/hosting.js';

const test = (await requireDocker(anyTest, 'hosting/abandoned-sessions')).serial;

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

test('sessions left without a DELETE are closed after abandonedSeconds and audited; a quiet client with its stream open keeps its session', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-abandoned-');
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'acme', ['--limit', 'sessions=3', '--limit', 'abandonedSeconds=2']);
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());

  const present = await connectTenant(t, hosting.server.url, key);
  t.is((await call(present.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
  const left = [await leaveWithoutClosing(hosting.server.url, key), await leaveWithoutClosing(hosting.server.url, key)];
  t.is(new Set(left).size, 2);

  // Full until the leavers' sessions go: the refusal says how to see and close them.
  const refused = await connectAs(hosting.server.url, key).then(
    async (connection) => {
      await connection.close();
      return 'opened';
    },
    (error: unknown) => String(error),
  );
  t.regex(refused, /quota_exceeded: the limit sessions \(3 at once\) is reached/);
  t.regex(refused, /GET \/sessions lists this tenant's sessions and DELETE \/sessions\/<id> closes one \(with this key\)/);
  t.regex(refused, /closes by itself after 2 s without a request or an open event stream/);

  for (const id of left)
    t.like(await hosting.observer.waitFor((event) => event.event === 'session_close' && event.session === id, 60_000), { tenant: 'acme', reason: 'abandoned' });
  const owner = await post(hosting.server.url, listToolsMessage(), { ...auth(key), 'Mcp-Session-Id': left[0]! });
  t.is(owner.status, 404);
  t.regex(
    ((await owner.json()) as { error: { message: string } }).error.message,
    /abandonedSeconds \(2 s without a request or an open event stream: its client seems gone\)/,
  );

  // The quiet client was inactive longer than abandonedSeconds too, with its event stream open: still there.
  t.true(
    hosting.server.listSessions().some((session) => session.id === present.sessionId),
    'the client that stayed keeps its session',
  );
  t.false(
    hosting.observer.events.some((event) => event.event === 'session_close' && event.session === present.sessionId),
    'and it was never closed',
  );
  t.is((await call(present.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
  const again = await connectTenant(t, hosting.server.url, key);
  t.truthy(again.sessionId, 'the tenant opens sessions again');
});
