/**
 * A client that sends `initialize` and goes away before the answer never
 * learns its session's id: the server must close that session and remove
 * its container at once, not after the idle timeout. Real HTTP (fetch,
 * aborted), real Docker.
 */
import anyTest from 'ava';
import { join } from 'node:path';
import { LABELS } from '../../src/backends/docker/labels.js';
import { containersWithLabel, eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, connectAs, hostingFolder, startHosting } from '../helpers/hosting.js';

const test = (await requireDocker(anyTest, 'hosting/aborted-open')).serial;

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'leaver', version: '1.0.0' } },
};

const ours = () => containersWithLabel(LABELS.ownerPid, String(process.pid));

test('an initialize aborted before its answer leaves no session, no container and no held slot', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'leaver', ['--limit', 'sessions=2', '--limit', 'idleSeconds=3600']);
  // One server-wide slot: the second initialize waits for it, so the abort lands before its session exists.
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data'), maxSessions: 1, sessionWaitMs: 120_000 });
  t.teardown(() => hosting.close());
  const first = await connectAs(hosting.server.url, key);

  const abort = new AbortController();
  const leaving = fetch(hosting.server.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}` },
    body: JSON.stringify(initialize),
    signal: abort.signal,
  });
  t.true(await eventually(async () => hosting.server.queuedSessions === 1), 'the second initialize waits for the slot');
  abort.abort();
  t.is(
    await leaving.then(
      () => 'answered',
      (error: unknown) => (error as { name?: string }).name,
    ),
    'AbortError',
  );
  // The slot frees: the waiting open goes on, finds its client gone, and closes what it opened.
  await first.close();

  t.true(await eventually(async () => hosting.server.queuedSessions === 0 && hosting.server.listSessions().length === 0));
  t.true(await eventually(async () => (await ours()).length === 0), 'no container is left for the aborted session');
  t.false(
    hosting.observer.events.some((event) => event.event === 'session_open' && event.session !== first.sessionId),
    'the aborted session never opened',
  );
  // Its server-wide slot came back (released with its tenant quota): with one slot, a new session opens.
  const again = await connectAs(hosting.server.url, key);
  await again.close();
});
