/**
 * Per-session container limits through the whole path: ShellService.openSession
 * → the shell thread → the Docker backend → the container spec, read back with
 * `docker inspect`. One service hosts sessions with different limits, and its
 * warm pool never hands a spare started for one set of limits to another.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import type { ShellSessionHandle } from '../../src/shell/session-handle.js';
import { ShellService } from '../../src/shell/shell-service.js';
import { makeWorkspace, requireDocker } from '../helpers/docker.js';

const test = await requireDocker(anyTest, 'shell/session-limits');

const MiB = 1024 * 1024;
const BACKEND_LIMITS = { memory: 192 * MiB, cpus: 1, pids: 200 };

let service: ShellService | undefined;
test.before(async () => {
  // warmPool 1: every open refills a spare for its workspace and limits, which a later open may (wrongly) take.
  service = await ShellService.create({ docker: { warmPool: 1, limits: BACKEND_LIMITS } });
});
test.after.always(async () => {
  await service?.close();
});

interface ContainerLimits {
  memory: number;
  memorySwap: number;
  cpus: number;
  pids: number;
}

/** The limits the engine holds for the session's container (its hostname is the container's short id). */
async function containerLimits(session: ShellSessionHandle): Promise<ContainerLimits> {
  const result = await session.run({ command: 'hostname' });
  const info = await createEngineClient().getContainer(result.output.trim()).inspect();
  const host = info.HostConfig;
  return { memory: host.Memory ?? 0, memorySwap: host.MemorySwap ?? 0, cpus: (host.NanoCpus ?? 0) / 1e9, pids: host.PidsLimit ?? 0 };
}

async function open(t: ExecutionContext, workspaceRoot: string, limits?: { memory?: number; cpus?: number; pids?: number }): Promise<ShellSessionHandle> {
  const session = await service!.openSession({ sandbox: 'docker', workspaceRoot, ...(limits ? { limits } : {}) });
  t.teardown(() => session.close());
  t.is(session.backend, 'docker');
  return session;
}

test('a session opened with limits gets exactly them; another on the same service gets its own', async (t) => {
  const workspace = await makeWorkspace(t, 'toolcell-session-limits-');
  const small = await open(t, workspace, { memory: 64 * MiB, cpus: 0.5, pids: 64 });
  const large = await open(t, workspace, { memory: 320 * MiB, cpus: 2, pids: 512 });
  t.deepEqual(await containerLimits(small), { memory: 64 * MiB, memorySwap: 64 * MiB, cpus: 0.5, pids: 64 });
  t.deepEqual(await containerLimits(large), { memory: 320 * MiB, memorySwap: 320 * MiB, cpus: 2, pids: 512 });
});

test("a field left out takes the backend's limit, and a session without limits gets the backend's", async (t) => {
  const workspace = await makeWorkspace(t, 'toolcell-session-limits-');
  const partial = await open(t, workspace, { pids: 48 });
  const plain = await open(t, workspace);
  t.deepEqual(await containerLimits(partial), { ...BACKEND_LIMITS, memorySwap: BACKEND_LIMITS.memory, pids: 48 });
  t.deepEqual(await containerLimits(plain), { ...BACKEND_LIMITS, memorySwap: BACKEND_LIMITS.memory });
});

test('the warm pool never hands a spare to a session with other limits', async (t) => {
  const workspace = await makeWorkspace(t, 'toolcell-session-limits-');
  const first = { memory: 96 * MiB, cpus: 0.25, pids: 80 };
  const other = { memory: 128 * MiB, cpus: 0.75, pids: 96 };
  // Each open leaves a spare started for its own workspace and limits; the next opens alternate.
  const sessions = [];
  for (const limits of [first, other, first, other, first]) sessions.push({ limits, session: await open(t, workspace, limits) });
  for (const { limits, session } of sessions) {
    t.deepEqual(await containerLimits(session), { ...limits, memorySwap: limits.memory });
  }
  // Same workspace and limits: distinct containers all the same (a spare is handed out once).
  const hosts = await Promise.all(sessions.map(async ({ session }) => (await session.run({ command: 'hostname' })).output.trim()));
  t.is(new Set(hosts).size, sessions.length);
});
