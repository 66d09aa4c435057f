/**
 * `serve --tenants` lowers the local Docker engine below tenants' calls
 * (src/cli/engine-priority.ts): every thread of the engine's processes, and
 * their session group where the kernel groups by session (autogroup). Real
 * processes stand in for the engine's where a test must change them; the
 * real engine is found, and (in one test, put back after it) lowered by the
 * real CLI.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { getPriority } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autogroupNice, findEngineProcesses, lowerEnginePriority, type EngineProcess } from '../../src/cli/engine-priority.js';
import { requireDocker } from '../helpers/docker.js';
import { rememberEnginePriority } from '../helpers/engine-priority.js';
import { startCliServer } from '../helpers/hosting-cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

const test = anyTest.serial;
const dockerTest = await requireDocker(anyTest, 'cli/engine-priority');
const GROUPS_ON = (await readFile('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').catch(() => '0')).trim() === '1';

/** A long-lived child, killed at teardown; `ownSession` starts it in a session (and so an autogroup) of its own. */
async function child(t: ExecutionContext, command: string, args: string[], options: { ownSession: boolean }): Promise<ChildProcess> {
  const started = spawn(command, args, { stdio: 'ignore', detached: options.ownSession });
  await once(started, 'spawn');
  t.teardown(() => void started.kill('SIGKILL'));
  return started;
}

const groupNice = async (pid: number | 'self'): Promise<number> => autogroupNice(await readFile(`/proc/${pid}/autogroup`, 'utf8'));
const threadNices = async (pid: number): Promise<number[]> => (await readdir(`/proc/${pid}/task`)).map((tid) => getPriority(Number(tid)));

test('every thread of an engine process and its own session group go to the nice asked for', async (t) => {
  // A Node process: several threads (libuv's pool, V8's), as dockerd and containerd have.
  const engine = await child(t, process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { ownSession: true });
  for (let i = 0; i < 200 && (await readdir(`/proc/${engine.pid}/task`)).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  const ownBefore = GROUPS_ON ? await groupNice('self') : 0;
  const result = await lowerEnginePriority({ nice: 10, processes: [{ pid: engine.pid!, name: 'dockerd' }] });
  t.true('summary' in result, JSON.stringify(result));
  const nices = await threadNices(engine.pid!);
  t.true(nices.length > 1, `threads: ${nices.length}`);
  t.deepEqual(new Set(nices), new Set([10]));
  if (GROUPS_ON) {
    t.is(await groupNice(engine.pid!), 10);
    t.is(await groupNice('self'), ownBefore, "the server's own session group keeps its nice");
  }
});

test('a session the server shares with the engine keeps its nice (lowering it would lower the server), and the line says so', async (t) => {
  if (!GROUPS_ON) return t.pass('this kernel does not group by session');
  // The server here is a process in a session (so an autogroup) of its own, with its
  // "engine" a child in the same session. Not this test's own process: it may run in
  // the kernel's root group (no session group: CI's runner never starts a session),
  // which /proc shows as an empty line and where a thread's nice weighs in full.
  const module = new URL('../../src/cli/engine-priority.js', import.meta.url).href;
  const script = `
    import { spawn } from 'node:child_process';
    import { readFile } from 'node:fs/promises';
    import { getPriority } from 'node:os';
    import { lowerEnginePriority } from ${JSON.stringify(module)};
    const engine = spawn('sleep', ['60'], { stdio: 'ignore' });
    await new Promise((resolve) => engine.once('spawn', resolve));
    const before = await readFile('/proc/self/autogroup', 'utf8');
    const result = await lowerEnginePriority({ nice: 10, processes: [{ pid: engine.pid, name: 'containerd' }] });
    const after = await readFile('/proc/self/autogroup', 'utf8');
    engine.kill('SIGKILL');
    console.log(JSON.stringify({ result, before, after, engineNice: getPriority(engine.pid) }));`;
  const server = spawn(process.execPath, ['--input-type=module', '-e', script], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => void server.kill('SIGKILL'));
  let out = '';
  server.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const [code] = (await once(server, 'exit')) as [number | null];
  t.is(code, 0, out);
  const { result, before, after, engineNice } = JSON.parse(out) as {
    result: { summary?: string; problem?: string };
    before: string;
    after: string;
    engineNice: number;
  };
  t.regex(before, /^\/autogroup-\d+ nice 0/, 'the server has a session group of its own');
  t.is(engineNice, 10, "the engine's thread is lowered");
  t.is(after, before, "the server's session group keeps its nice");
  t.regex(result.summary ?? result.problem ?? '', /its session is this server's/);
});

test('a process already below the nice asked for keeps its own: lowering never raises a priority', async (t) => {
  const engine = await child(t, 'nice', ['-n', '15', 'sleep', '60'], { ownSession: true });
  // `nice` execs sleep: the pid is sleep's once it runs at 15.
  for (let i = 0; i < 100 && getPriority(engine.pid!) !== 15; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  await lowerEnginePriority({ nice: 10, processes: [{ pid: engine.pid!, name: 'dockerd' }] });
  t.is(getPriority(engine.pid!), 15);
});

test('no engine process on this host: nothing is changed and the line says why', async (t) => {
  const result = await lowerEnginePriority({ nice: 10, processes: [] });
  t.true('problem' in result);
  t.regex('problem' in result ? result.problem : '', /keeps its priority: no dockerd or containerd/);
});

test("the engine's processes are found by their names, a shim's as the kernel cuts it", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-engine-names-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const shim = join(dir, 'containerd-shim-runc-v2');
  const other = join(dir, 'dockerd-helper');
  await copyFile('/bin/sleep', shim);
  await copyFile('/bin/sleep', other);
  const shimChild = await child(t, shim, ['60'], { ownSession: true });
  const otherChild = await child(t, other, ['60'], { ownSession: true });
  const found: EngineProcess[] = await findEngineProcesses();
  t.deepEqual(
    found.filter((p) => p.pid === shimChild.pid),
    [{ pid: shimChild.pid!, name: 'containerd-shim' }],
  );
  t.false(
    found.some((p) => p.pid === otherChild.pid),
    'a name that only starts like an engine is not one',
  );
});

dockerTest.serial('serve --tenants --engine-nice N lowers the real engine (dockerd, containerd and its shims) and says so once serving', async (t) => {
  const restore = await rememberEnginePriority();
  t.teardown(restore);
  const engine = await findEngineProcesses();
  t.true(
    engine.some((p) => p.name === 'dockerd'),
    JSON.stringify(engine),
  );
  const dir = await hostingFolder(t, 'toolcell-engine-nice-');
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'acme');
  const server = await startCliServer(t, ['--tenants', file, '--data-dir', join(dir, 'data'), '--engine-nice', '5']);
  t.regex(server.stderr(), /the Docker engine \((containerd, )?(containerd-shim, )?dockerd\) runs at nice 5, below tenants' calls/);
  for (const { pid } of await findEngineProcesses()) {
    const nices = await threadNices(pid).catch(() => [] as number[]);
    t.true(
      nices.every((nice) => nice >= 5),
      `${pid}: ${nices.join(',')}`,
    );
  }
  const dockerd = engine.find((p) => p.name === 'dockerd')!;
  if (GROUPS_ON && (await readFile(`/proc/${dockerd.pid}/autogroup`, 'utf8')) !== (await readFile('/proc/self/autogroup', 'utf8')))
    t.true((await groupNice(dockerd.pid)) >= 5);
});

test('--engine-nice takes 0 to 19 and needs --tenants', async (t) => {
  const { runCli } = await import('../helpers/cli.js');
  const high = await runCli(['serve', '--http', '127.0.0.1:0', '--tenants', '/nonexistent.json', '--engine-nice', '20']);
  t.is(high.code, 2, high.stderr);
  t.regex(high.stderr, /--engine-nice.*must be a whole number from 0 to 19/);
  const alone = await runCli(['serve', '--http', '127.0.0.1:0', '--engine-nice', '5']);
  t.is(alone.code, 2, alone.stderr);
  t.regex(alone.stderr, /--engine-nice needs --tenants FILE/);
});
