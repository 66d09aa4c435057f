/**
 * The Docker backend's `cpuSet` (`serve --sandbox-cpus`): every sandbox
 * container, the warm pool's spares too, runs on those CPUs and no other,
 * as the engine records it (HostConfig.CpusetCpus) and as the kernel holds
 * the container's processes to it (their Cpus_allowed_list on the host,
 * and, under runc, the command's own view). A CPU the engine's machine
 * lacks fails the start with the engine's own list of what it has.
 */
import anyTest from 'ava';
import { allowedCpus } from '../../../src/cli/server-cpus.js';
import { formatCpuList } from '../../../src/contracts/cpu-list.js';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import type { DockerSession } from '../../../src/backends/docker/docker-session.js';
import { createTestBackend, makeWorkspace, requireDocker, runCommand, sessionId, useSandboxBackend, type SandboxFixture } from '../../helpers/docker.js';
import { UNDER_GVISOR } from '../../helpers/test-runtime.js';

const dockerTest = await requireDocker(anyTest, 'docker/cpu-set');
const test = dockerTest.serial;

// The last CPU this process may use: a set that differs from the default (every CPU) on a machine of two or more.
const mine = await allowedCpus();
const SANDBOX_CPU = formatCpuList([mine[mine.length - 1]!]);
const sandbox: SandboxFixture = useSandboxBackend(dockerTest, { cpuSet: SANDBOX_CPU, warmPool: 1 });

test('every sandbox container runs on the cpuSet alone: the engine records it, the kernel holds its processes to it', async (t) => {
  t.timeout(120_000);
  const workspaceRoot = await makeWorkspace(t);
  // Two sessions on one workspace: the first may take the warm spare, the second a container started for it.
  for (const label of ['first', 'second']) {
    const session = await sandbox.session(t, { workspaceRoot, label });
    const info = await createEngineClient().getContainer(session.containerId).inspect();
    t.is(info.HostConfig.CpusetCpus, SANDBOX_CPU, `${label}: the engine's record`);
    t.deepEqual(formatCpuList(await allowedCpus(info.State.Pid)), SANDBOX_CPU, `${label}: the container's first process on the host`);
    if (!UNDER_GVISOR) {
      // gVisor's kernel shows its own CPUs to commands; the host's hold on the sandbox is checked above.
      const seen = await runCommand(session, "sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status", { mode: 'pipes' });
      t.is(seen.stdout.trim(), SANDBOX_CPU, `${label}: the command's own CPUs`);
    }
  }
});

test("a cpuSet naming a CPU the engine's machine lacks fails the session's start, saying which CPUs there are and which option named it", async (t) => {
  const backend = await createTestBackend({ cpuSet: '4000', warmPool: 0 });
  t.teardown(() => backend.close());
  const error = await t.throwsAsync(backend.openSession({ sessionId: sessionId('no-such-cpu'), workspaceRoot: await makeWorkspace(t) }));
  t.is((error as { code?: string }).code, 'sandbox_unavailable');
  t.regex(error!.message, /requested 4000, available: 0(-\d+)?/);
  t.regex(error!.message, /`serve --sandbox-cpus` or the backend's cpuSet/);
});

test('a malformed cpuSet is refused by the options, before the engine is asked', async (t) => {
  for (const cpuSet of ['', 'one', '1-', '3-1', '1,,2', '0-7:2', ' 1']) {
    await t.throwsAsync(createTestBackend({ cpuSet, warmPool: 0 }), { message: /cpuSet/ }, JSON.stringify(cpuSet));
  }
});

test('no cpuSet: containers may run on every CPU (no CpusetCpus)', async (t) => {
  const backend = await createTestBackend({ warmPool: 0 });
  t.teardown(() => backend.close());
  const session = (await backend.openSession({ sessionId: sessionId('any-cpu'), workspaceRoot: await makeWorkspace(t) })) as DockerSession;
  t.teardown(() => session.close());
  const info = await createEngineClient().getContainer(session.containerId).inspect();
  t.is(info.HostConfig.CpusetCpus ?? '', '');
});
