/**
 * A runtime (what `toolcell exec`, `run` and `chat` build) opens one sandbox
 * session for its workspace and replaces a dead container without the warm
 * pool, so it starts exactly one container: no spare that nothing would take
 * (each cost a container start while the first command ran, and a removal
 * before the process could exit).
 */
import anyTest from 'ava';
import { LABELS } from '../../src/backends/docker/labels.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { containersWithLabel, makeWorkspace, requireDocker } from '../helpers/docker.js';
import { giveWorkspaceToSandboxUser, testSandboxRuntime } from '../helpers/test-runtime.js';

const test = await requireDocker(anyTest, 'runtime/sandbox-containers');

test('a runtime runs its commands in one container and starts no spare', async (t) => {
  const root = await makeWorkspace(t, 'toolcell-one-container-');
  await giveWorkspaceToSandboxUser(root);
  await using runtime = await createRuntime({ workspace: root, sandbox: 'docker', ...testSandboxRuntime() });
  const scheduler = runtime.createScheduler({ approvalMode: 'yolo' });
  // Two calls: a spare started when the first container was ready has long been created by the second's end.
  for (const [index, command] of ['echo one', 'echo two'].entries()) {
    const [result] = await scheduler.schedule([{ callId: `echo-${index}`, name: 'run_shell_command', args: { command } }], new AbortController().signal);
    t.is(result?.status, 'success');
  }
  const containers = await containersWithLabel(LABELS.workspace, root);
  t.is(containers.length, 1, `containers of the workspace: ${containers.join(', ')}`);
});
