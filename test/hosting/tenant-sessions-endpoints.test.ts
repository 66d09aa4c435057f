/**
 * A tenant's own sessions, with its own key: `GET /sessions` lists them
 * (every key of the tenant, never another tenant's), `DELETE /sessions/<id>`
 * closes one, audited as closed by its tenant; another tenant's session id
 * gets exactly the 404 of an unknown id and the session goes on. Real
 * Docker, real HTTP, the SDK client.
 */
import anyTest from 'ava';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, listToolsMessage, post, startHosting } from '../helpers/hosting.js';

const test = (await requireDocker(anyTest, 'hosting/tenant-sessions-endpoints')).serial;

interface Listed {
  sessions: Array<{ id: string; subject: string; ageMs: number; inactiveMs: number; streamOpen: boolean; calls: number }>;
}

test("a tenant lists and closes its own sessions with its own key, and can neither see nor close another tenant's", async (t) => {
  const dir = await hostingFolder(t, 'toolcell-tenant-sessions-');
  const file = join(dir, 'tenants.json');
  const alphaKeys = [await addTenant(file, 'alpha'), await addTenant(file, 'alpha')];
  const betaKey = await addTenant(file, 'beta');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const base = hosting.server.url.replace(/\/mcp$/, '');
  const as = (key: string, method = 'GET') => ({ method, headers: { Authorization: `Bearer ${key}` } });

  const first = await connectTenant(t, hosting.server.url, alphaKeys[0]!);
  const second = await connectTenant(t, hosting.server.url, alphaKeys[1]!);
  const theirs = await connectTenant(t, hosting.server.url, betaKey);
  await call(first.client, 'list_directory', { dir_path: '.' });

  const listed = await fetch(`${base}/sessions`, as(alphaKeys[0]!));
  t.is(listed.status, 200);
  const alpha = ((await listed.json()) as Listed).sessions;
  t.deepEqual(alpha.map((session) => session.id).sort(), [first.sessionId, second.sessionId].sort(), "both of alpha's keys' sessions, not beta's");
  t.like(
    alpha.find((session) => session.id === first.sessionId),
    { subject: alphaKeys[0]!.slice(3, 15), calls: 1 },
  );
  t.true(alpha.every((session) => typeof session.inactiveMs === 'number' && typeof session.streamOpen === 'boolean'));
  const beta = ((await (await fetch(`${base}/sessions`, as(betaKey))).json()) as Listed).sessions;
  t.deepEqual(
    beta.map((session) => session.id),
    [theirs.sessionId],
  );

  // Another tenant's id answers as an unknown one, and that session goes on.
  const foreign = await fetch(`${base}/sessions/${theirs.sessionId}`, as(alphaKeys[0]!, 'DELETE'));
  const unknown = await fetch(`${base}/sessions/${randomUUID()}`, as(alphaKeys[0]!, 'DELETE'));
  t.is(foreign.status, 404);
  t.is(unknown.status, 404);
  t.deepEqual(Object.keys((await foreign.json()) as object), Object.keys((await unknown.json()) as object));
  t.is((await call(theirs.client, 'list_directory', { dir_path: '.' })).errorType, undefined, "beta's session is untouched");

  // One key closes a session another key of the same tenant opened.
  const closed = await fetch(`${base}/sessions/${second.sessionId}`, as(alphaKeys[0]!, 'DELETE'));
  t.is(closed.status, 200);
  t.deepEqual(await closed.json(), { closed: true, id: second.sessionId });
  t.like(await hosting.observer.waitFor((event) => event.event === 'session_close' && event.session === second.sessionId), {
    tenant: 'alpha',
    reason: 'tenant',
  });
  const gone = await post(hosting.server.url, listToolsMessage(), { Authorization: `Bearer ${alphaKeys[1]!}`, 'Mcp-Session-Id': second.sessionId });
  t.is(gone.status, 404);
  t.regex(((await gone.json()) as { error: { message: string } }).error.message, /closed by its tenant/);
  t.deepEqual(
    ((await (await fetch(`${base}/sessions`, as(alphaKeys[1]!))).json()) as Listed).sessions.map((session) => session.id),
    [first.sessionId],
  );
});

test('without a valid key the endpoints answer 401 with the challenge, audited; wrong methods 405; a malformed id 400', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-tenant-sessions-');
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'alpha');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const base = hosting.server.url.replace(/\/mcp$/, '');
  const session = await connectTenant(t, hosting.server.url, key);

  const credentials: Array<Record<string, string>> = [{}, { Authorization: 'Bearer tc_abcdefabcdef_wrongwrongwrongwrongwrongwrongwrongwrongwro' }];
  for (const headers of credentials) {
    for (const [path, method] of [
      ['/sessions', 'GET'],
      [`/sessions/${session.sessionId}`, 'DELETE'],
    ] as const) {
      const response = await fetch(`${base}${path}`, { method, headers });
      t.is(response.status, 401, `${method} ${path}`);
      t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer /);
    }
  }
  t.true(
    hosting.server.listSessions().some((live) => live.id === session.sessionId),
    'nothing was closed',
  );
  t.is(hosting.observer.events.filter((event) => event.event === 'auth_failure').length, 4);
  const auth = { Authorization: `Bearer ${key}` };
  t.is((await fetch(`${base}/sessions`, { method: 'POST', headers: auth })).status, 405);
  t.is((await fetch(`${base}/sessions/${session.sessionId}`, { headers: auth })).status, 405);
  t.is((await fetch(`${base}/sessions/%E0%A4%A`, { method: 'DELETE', headers: auth })).status, 400);
});
