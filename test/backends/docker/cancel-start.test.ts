/**
 * Opening a Docker session can be cancelled while its container starts: the
 * opening rejects with `cancelled`, the half-started container is removed
 * before it does, and no spare is started in its place.
 */
import anyTest from 'ava';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { LABELS } from '../../../src/backends/docker/labels.js';
import { containersWithLabel, makeWorkspace, requireDocker, sessionId, createTestBackend } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/cancel-start');

test.serial('a session whose container is being created when the signal aborts: cancelled, and nothing is left', async (t) => {
  const backend = await createTestBackend({ warmPool: 1 });
  t.teardown(() => backend.close());
  const workspaceRoot = await makeWorkspace(t);
  const controller = new AbortController();
  const events = await createEngineClient().getEvents({ filters: { label: [`${LABELS.backend}=${backend.backendId}`], event: ['create'] } });
  t.teardown(() => (events as unknown as { destroy(): void }).destroy());
  events.once('data', () => controller.abort());

  const error = await t.throwsAsync(backend.openSession({ sessionId: sessionId('cancel'), workspaceRoot, signal: controller.signal }));
  t.is((error as { code?: string }).code, 'cancelled');
  t.true(controller.signal.aborted, 'the abort came from the create event');
  t.deepEqual(await containersWithLabel(LABELS.backend, backend.backendId), [], 'the container was removed, and no spare started');
});

test.serial('an already aborted signal starts nothing', async (t) => {
  const backend = await createTestBackend({ warmPool: 1 });
  t.teardown(() => backend.close());
  const error = await t.throwsAsync(
    backend.openSession({ sessionId: sessionId('cancel'), workspaceRoot: await makeWorkspace(t), signal: AbortSignal.abort() }),
  );
  t.is((error as { code?: string }).code, 'cancelled');
  t.deepEqual(await containersWithLabel(LABELS.backend, backend.backendId), []);
});
