/**
 * `awaitSandbox: false`: openSession resolves before the container is up;
 * the first run waits for it; closing before it is up removes it.
 */
import anyTest from 'ava';
import { LABELS } from '../../src/backends/docker/labels.js';
import { ShellService } from '../../src/shell/shell-service.js';
import { containersWithLabel, eventually, makeWorkspace, requireDocker } from '../helpers/docker.js';

const test = (await requireDocker(anyTest, 'shell/background-open')).serial;

let service: ShellService | undefined;
test.before(async () => {
  service = await ShellService.create({ docker: { warmPool: 0 } });
});
test.after.always(async () => {
  await service?.close();
});

const ours = () => containersWithLabel(LABELS.ownerPid, String(process.pid));

test('a session opened without awaiting its sandbox says where it runs, and its first run waits for the container', async (t) => {
  const workspace = await makeWorkspace(t, 'toolcell-background-open-');
  const session = await service!.openSession({ sandbox: 'docker', workspaceRoot: workspace, awaitSandbox: false, limits: { pids: 64 } });
  t.teardown(() => session.close());
  t.is(session.backend, 'docker');
  t.regex(session.describe(), /^docker \(/);
  const result = await session.run({ command: 'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max' });
  t.is(result.exitCode, 0);
  t.is(result.output.trim(), '64');
});

test('closing a session whose container is still starting removes the container', async (t) => {
  const workspace = await makeWorkspace(t, 'toolcell-background-open-');
  t.true(await eventually(async () => (await ours()).length === 0));
  const session = await service!.openSession({ sandbox: 'docker', workspaceRoot: workspace, awaitSandbox: false });
  await session.close();
  t.true(await eventually(async () => (await ours()).length === 0), 'no container is left');
});
