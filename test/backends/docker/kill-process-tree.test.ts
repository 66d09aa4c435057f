/**
 * Ending a call ends its whole process tree: process groups, setsid, nohup,
 * double forks and SIGTERM-ignoring processes included. Checked from the
 * host with `docker top`, independently of the supervisor.
 */
import anyTest from 'ava';
import type { ExecutionContext } from 'ava';
import type { DockerSession } from '../../../src/backends/docker/docker-session.js';
import { SANDBOX_TEST_ENV, commandProcesses, eventually, requireDocker, runCommand, useSandboxBackend } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/kill');
const sandbox = useSandboxBackend(test);

/** Forks every escape we know, then prints `armed` and waits forever. */
const ESCAPES = [
  'sleep 1001 &',
  '(sleep 1002 &) &',
  'setsid sleep 1003 &',
  'nohup sleep 1004 >/dev/null 2>&1 &',
  '(setsid sh -c "sleep 1005 & exit" &);',
  'bash -c \'trap "" TERM; while :; do sleep 0.05; done\' &',
  'setsid bash -c \'trap "" TERM HUP INT; sleep 1006\' &',
].join(' ');

async function startArmed(session: DockerSession, mode: 'pty' | 'pipes') {
  const spawned = await session.spawn({ command: `${ESCAPES} sleep 0.2; echo armed; sleep 1007`, cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode });
  let output = '';
  const armed = new Promise<void>((resolve) => {
    spawned.onData((chunk) => {
      output += Buffer.from(chunk).toString();
      if (output.includes('armed')) resolve();
    });
  });
  await armed;
  return spawned;
}

async function assertNoCommandProcess(t: ExecutionContext, session: DockerSession, label: string): Promise<void> {
  const left = await commandProcesses(session.containerId);
  t.deepEqual(
    left.map((p) => p.args),
    [],
    `${label}: nothing of the call may survive`,
  );
}

for (const mode of ['pty', 'pipes'] as const) {
  test(`kill() ends setsid, nohup, double-fork and SIGTERM-ignoring descendants (${mode})`, async (t) => {
    const session = await sandbox.session(t);
    const spawned = await startArmed(session, mode);
    t.true((await commandProcesses(session.containerId)).length >= 8, 'the escapes are running before the kill');
    await spawned.kill();
    const status = await spawned.exited;
    t.is(status.exitCode, null);
    t.is(status.signal, 'SIGTERM');
    await assertNoCommandProcess(t, session, `after kill (${mode})`);
    t.deepEqual((await runCommand(session, 'echo alive')).status, { exitCode: 0, signal: null }, 'the session still works');
  });
}

test('a finished call leaves nothing behind, even its `&` children', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, `${ESCAPES} echo finished`);
  t.is(result.status.exitCode, 0);
  t.regex(result.stdout, /finished/);
  await assertNoCommandProcess(t, session, 'after a normal exit');
});

test('a process that ignores SIGTERM is SIGKILLed after the grace period', async (t) => {
  const session = await sandbox.session(t);
  const spawned = await session.spawn({
    command: 'trap "" TERM; echo ready; while :; do sleep 0.05; done',
    cwd: '.',
    env: { ...SANDBOX_TEST_ENV },
    mode: 'pipes',
  });
  await new Promise<void>((resolve) => spawned.onData((chunk) => Buffer.from(chunk).toString().includes('ready') && resolve()));
  const started = Date.now();
  await spawned.kill({ graceMs: 300 });
  const status = await spawned.exited;
  t.is(status.signal, 'SIGKILL');
  t.true(Date.now() - started >= 250, 'SIGKILL comes only after the grace period');
  await assertNoCommandProcess(t, session, 'after SIGKILL');
});

test('a fork storm is frozen and killed (the pids limit bounds it)', async (t) => {
  const session = await sandbox.session(t);
  const spawned = await session.spawn({ command: 'echo go; f() { f | f & }; f', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pipes' });
  await new Promise<void>((resolve) => spawned.onData((chunk) => Buffer.from(chunk).toString().includes('go') && resolve()));
  await new Promise((resolve) => setTimeout(resolve, 500));
  await spawned.kill({ graceMs: 0 });
  // A backstop only: under gVisor, where every system call of the kill's /proc walks is slow, a storm took up to 24 s to end.
  t.true(await eventually(async () => (await commandProcesses(session.containerId)).length === 0, 60_000), 'the storm is gone');
  t.deepEqual((await runCommand(session, 'echo alive')).status, { exitCode: 0, signal: null }, 'the session still works');
});

test('kill() after the process exited is a no-op', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'true');
  await result.process.kill();
  t.deepEqual(await result.process.exited, { exitCode: 0, signal: null });
  await t.throwsAsync(result.process.kill({ graceMs: -1 }), { instanceOf: RangeError, message: /graceMs/ });
});
