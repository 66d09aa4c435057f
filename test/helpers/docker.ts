/**
 * Shared machinery for tests that need the real Docker sandbox: a readiness
 * gate that FAILS under CI=true and skips (with a message) elsewhere, a
 * backend fixture that removes every container it made, temporary
 * workspaces, a command runner and a view of a container's processes from
 * the host.
 *
 * @example
 * import anyTest from 'ava';
 * const test = await requireDocker(anyTest, 'sandbox/kill');
 * const sandbox = useSandboxBackend(test);
 * test('true exits 0', async (t) => {
 *   const session = await sandbox.session(t);
 *   t.is((await runCommand(session, 'true')).status.exitCode, 0);
 * });
 */
import type { ExecutionContext, TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExitStatus, ShellSession, SpawnOptions, SpawnedProcess } from '../../src/backends/backend.js';
import { createDockerBackend, type DockerShellBackend } from '../../src/backends/docker/docker-backend.js';
import type { DockerSession } from '../../src/backends/docker/docker-session.js';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { imageExists, sandboxImageTag } from '../../src/backends/docker/image.js';
import type { DockerBackendOptions } from '../../src/backends/docker/options.js';
import { awaitEngine } from '../../src/backends/docker/probe.js';
import { SANDBOX_PATHS } from '../../src/backends/docker/sandbox-paths.js';
import { missingRequirement } from './missing-requirement.js';
import { giveWorkspaceToSandboxUser, testRuntimeOption } from './test-runtime.js';

/** Whether the sandbox can run here, and if not, why. */
export interface SandboxReadiness {
  ready: boolean;
  reason?: string;
}

let readiness: Promise<SandboxReadiness> | undefined;

/** True when the Docker engine answers (the image may still be missing). */
export async function dockerAvailable(): Promise<boolean> {
  return (await awaitEngine()).available;
}

/** Engine answers AND the current recipe's image is built. Memoized per process. */
export function sandboxReadiness(): Promise<SandboxReadiness> {
  readiness ??= (async () => {
    // Patient with an engine that is there but busy (the suite loads the machine): only an absent one is "not ready".
    const probe = await awaitEngine();
    if (!probe.available) return { ready: false, reason: probe.reason ?? 'the Docker engine does not answer' };
    const tag = sandboxImageTag();
    if (!(await imageExists({}, tag))) return { ready: false, reason: `the sandbox image ${tag} is not built (run \`toolcell sandbox build --offline\`)` };
    return { ready: true };
  })();
  return readiness;
}

/**
 * The `test` function for files that need the Docker sandbox. Ready: `test`
 * itself. Not ready under CI=true: one test that fails with the reason (and
 * the file's other tests skipped). Not ready elsewhere: every test skipped,
 * with the reason printed once.
 */
export async function requireDocker<Context>(test: TestFn<Context>, label: string): Promise<TestFn<Context>> {
  const state = await sandboxReadiness();
  if (state.ready) return test;
  return missingRequirement(test, {
    failingTitle: `${label}: the Docker sandbox is required when CI=true`,
    failure: `Docker sandbox not ready: ${state.reason}`,
    reason: `${label}: skipped: ${state.reason}`,
  });
}

/** The environment tests give commands: what the shell service's allowlist would hold. */
export const SANDBOX_TEST_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: SANDBOX_PATHS.home,
  LANG: 'C.UTF-8',
  TERM: 'xterm-256color',
  PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
});

/** A fresh, real-path temporary folder, removed at teardown. */
export async function makeWorkspace(t: ExecutionContext, prefix = 'toolcell-sbx-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  await giveWorkspaceToSandboxUser(dir);
  // Retried: a warm spare container may still be preparing its folders in the workspace.
  t.teardown(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  return dir;
}

/** A unique session id for one test. */
export function sessionId(label = 'test'): string {
  return `${label}-${randomBytes(4).toString('hex')}`;
}

/** createDockerBackend on the suite's runtime (TOOLCELL_TEST_RUNTIME, test-runtime.ts) unless `options` names one. */
export function createTestBackend(options: DockerBackendOptions = {}): Promise<DockerShellBackend> {
  return createDockerBackend({ ...testRuntimeOption(), ...options });
}

/** The shared backend of a test file, and sessions that close with their test. */
export interface SandboxFixture {
  /** The file's backend (created in `before`, closed in `after.always`). */
  readonly backend: DockerShellBackend;
  /** Opens a session on `workspaceRoot` (default: a fresh temporary folder); closed at teardown. */
  session(t: ExecutionContext, options?: { workspaceRoot?: string; label?: string }): Promise<DockerSession>;
}

/**
 * Creates one Docker backend for the test file (`before`) and removes all of
 * its containers at the end (`after.always`), so no test leaves one behind.
 * No spare containers unless `options` asks (`warmPool`): each test's session
 * has a workspace of its own, so a spare started for it would never be taken.
 */
export function useSandboxBackend<Context>(test: TestFn<Context>, options: DockerBackendOptions = {}): SandboxFixture {
  let backend: DockerShellBackend | undefined;
  test.before(async () => {
    backend = await createTestBackend({ warmPool: 0, ...options });
  });
  test.after.always(async () => {
    await backend?.close();
  });
  return {
    get backend(): DockerShellBackend {
      if (!backend) throw new Error('the sandbox backend is not created yet (use it inside a test)');
      return backend;
    },
    async session(t, sessionOptions = {}) {
      if (!backend) throw new Error('the sandbox backend is not created yet (use it inside a test)');
      const workspaceRoot = sessionOptions.workspaceRoot ?? (await makeWorkspace(t));
      const session = (await backend.openSession({ sessionId: sessionId(sessionOptions.label), workspaceRoot })) as DockerSession;
      t.teardown(() => session.close());
      return session;
    },
  };
}

/** What one command did. */
export interface CommandResult {
  status: ExitStatus;
  stdout: string;
  stderr: string;
  /** Raw bytes received, both streams. */
  bytes: number;
  pid: number;
  process: SpawnedProcess;
}

/** Runs a command to its end and collects its output (pty mode unless `options.mode` says otherwise). */
export async function runCommand(session: ShellSession, command: string, options: Partial<SpawnOptions> = {}): Promise<CommandResult> {
  const spawned = await session.spawn({ command, cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pty', ...options });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let bytes = 0;
  spawned.onData((chunk, stream) => {
    bytes += chunk.length;
    (stream === 'stderr' ? err : out).push(Buffer.from(chunk));
  });
  const status = await spawned.exited;
  return { status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), bytes, pid: spawned.pid, process: spawned };
}

/** One process of a container as the host sees it (`docker top`). */
export interface ContainerProcess {
  pid: number;
  user: string;
  args: string;
}

/**
 * Every process in a container, listed from outside the supervisor: `docker
 * top` under runc; under gVisor, whose processes the host's ps cannot see
 * (docker top lists host pids of the same numbers), a listing of gVisor's
 * /proc through `docker exec`, leaving out the lister itself.
 */
export async function containerProcesses(containerId: string): Promise<ContainerProcess[]> {
  const container = createEngineClient().getContainer(containerId);
  const info = await container.inspect();
  if (!String(info.HostConfig?.Runtime ?? '').startsWith('runsc')) {
    const top = await container.top({ ps_args: '-eo pid,user:32,args' });
    return (top.Processes ?? []).map((row: string[]) => ({ pid: Number(row[0]), user: row[1] ?? '', args: row.slice(2).join(' ') }));
  }
  const exec = await container.exec({ Cmd: ['python3', '-c', GVISOR_PS], User: '0:0', AttachStdout: true, AttachStderr: true, Tty: true });
  const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  return (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<[number, string, string]>).map(([pid, user, args]) => ({ pid, user, args }));
}

/** Lists gVisor's /proc as JSON [pid, user, args], without itself and tasks that are exiting (run by containerProcesses). */
const GVISOR_PS = `
import json, os, pwd
rows = []
for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) == os.getpid():
        continue
    try:
        uid = os.stat("/proc/" + name).st_uid
        args = open("/proc/" + name + "/cmdline", "rb").read().replace(b"\\0", b" ").decode(errors="replace").strip()
        state = open("/proc/" + name + "/stat").read().rsplit(")", 1)[1].split()[0]
        mapped = "\\nVmSize:" in open("/proc/" + name + "/status").read()
    except OSError:
        continue
    # A task without a memory map is exiting (killed, not yet a zombie; gVisor shows it a while): it runs no code.
    if state in ("Z", "X") or not mapped:
        continue
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    rows.append([int(name), user, args])
print(json.dumps(rows))
`;

/**
 * The processes of a container, or none once it is not running (the engine
 * answers 409): for checks polled while a container may still be starting
 * or already stopping, so they wait for their event instead of throwing.
 */
export async function runningProcesses(containerId: string): Promise<ContainerProcess[]> {
  try {
    return await containerProcesses(containerId);
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 409) return [];
    throw error;
  }
}

/**
 * toolcell's own processes in a container: docker-init, the supervisor and
 * its reapers (forks of it). A setpriv is a command being started (the same
 * process execs the command), so it counts as the command's.
 */
const TOOLCELL_PROCESS = /^(\/sbin\/docker-init|\/dev\/init|python3 -B \/opt\/toolcell\/supervisor\/supervisor\.py) /;

/**
 * Processes of a container that belong to commands: every process but
 * toolcell's own (root processes running docker-init or the supervisor).
 * Commands may run as root too (a root-owned workspace), so the user alone
 * does not tell them apart; these tests' commands never disguise their
 * command line.
 */
export async function commandProcesses(containerId: string): Promise<ContainerProcess[]> {
  return (await containerProcesses(containerId)).filter((row) => !((row.user === 'root' || row.user === '0') && TOOLCELL_PROCESS.test(row.args)));
}

/** Ids of the containers carrying `label=value`, running or not. */
export async function containersWithLabel(label: string, value: string): Promise<string[]> {
  const list = await createEngineClient().listContainers({ all: true, filters: { label: [`${label}=${value}`] } });
  return list.map((info) => info.Id);
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last answer. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
