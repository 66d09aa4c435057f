/**
 * One container per session: /tmp and processes are never shared.
 */
import anyTest from 'ava';
import { SANDBOX_TEST_ENV, makeWorkspace, requireDocker, runCommand, useSandboxBackend } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/sessions');
const sandbox = useSandboxBackend(test);

test("two sessions of one workspace see neither each other's /tmp nor processes", async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const first = await sandbox.session(t, { workspaceRoot, label: 'a' });
  const second = await sandbox.session(t, { workspaceRoot, label: 'b' });
  t.not(first.containerId, second.containerId);
  await runCommand(first, 'echo first-secret > /tmp/secret');
  const job = await first.spawn({ command: 'exec sleep 3001', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pty', background: true });
  const view = await runCommand(second, 'cat /tmp/secret 2>&1; ps -eo args', { mode: 'pipes' });
  t.regex(view.stdout, /No such file or directory/);
  t.notRegex(view.stdout, /sleep 3001/);
  t.is((await runCommand(first, 'cat /tmp/secret', { mode: 'pipes' })).stdout, 'first-secret\n', 'the first session keeps its own /tmp');
  t.regex((await runCommand(first, 'ps -eo args', { mode: 'pipes' })).stdout, /sleep 3001/);
  await job.kill();
});

test('the workspace itself is shared between sessions of that workspace', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const first = await sandbox.session(t, { workspaceRoot });
  const second = await sandbox.session(t, { workspaceRoot });
  await runCommand(first, 'echo shared > note.txt');
  t.is((await runCommand(second, 'cat note.txt', { mode: 'pipes' })).stdout, 'shared\n');
});

test('a session whose container died gets a fresh one on the next spawn', async (t) => {
  const session = await sandbox.session(t);
  const before = session.containerId;
  const { createEngineClient } = await import('../../../src/backends/docker/engine.js');
  await createEngineClient().getContainer(before).remove({ force: true });
  const result = await runCommand(session, 'echo back');
  t.is(result.stdout, 'back\n');
  t.not(session.containerId, before);
});

test('opening the same session id twice is refused', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const session = await sandbox.session(t, { workspaceRoot });
  await t.throwsAsync(sandbox.backend.openSession({ sessionId: session.id, workspaceRoot }), { instanceOf: TypeError, message: /already open/ });
});

test('openSession refuses bad options naming the field, and opens nothing', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  await t.throwsAsync(sandbox.backend.openSession({ sessionId: '', workspaceRoot }), {
    instanceOf: TypeError,
    message: /^openSession: options\.sessionId must not be empty/,
  });
  await t.throwsAsync(sandbox.backend.openSession({ sessionId: 'x'.repeat(201), workspaceRoot }), {
    instanceOf: TypeError,
    message: /^openSession: options\.sessionId must be at most 200 characters/,
  });
  await t.throwsAsync(sandbox.backend.openSession({ sessionId: 'relative', workspaceRoot: 'ws' }), {
    instanceOf: TypeError,
    message: /^openSession: options\.workspaceRoot must be an absolute path/,
  });
});
