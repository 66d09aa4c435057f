/**
 * Escaping the kill: after a cancelled or finished call, no process of it
 * may survive in the sandbox (background children, setsid, nohup, double
 * forks, SIGTERM handlers, fork races), unless it was started with
 * is_background; those end with the session.
 */
import anyTest from 'ava';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses, dockerText, nonce } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/kill');
const test = docker.serial;

let session: SandboxSession;
let containerId: string;

docker.before(async () => {
  session = await SandboxSession.open({ timeoutSeconds: 30 });
  [containerId = ''] = await session.containerIds();
});
docker.after.always(async () => {
  await session?.close();
});

/** A sleep whose argument marks it, so `docker top` can tell which test left it. */
function markedSleep(): { seconds: string; pattern: RegExp } {
  const seconds = `${3000 + Math.floor(Math.random() * 900)}.${Math.floor(Math.random() * 1e6)}`;
  return { seconds, pattern: new RegExp(seconds.replace('.', '\\.')) };
}

async function assertNothingLeft(t: import('ava').ExecutionContext, label: string): Promise<void> {
  t.deepEqual(await commandProcesses(containerId), [], `${label}: no process of the call may survive`);
  await session.assertAlive(t, `${label}: next call`);
}

/** Runs `setup` (which starts escapees and prints `marker` once they run), cancels it, and checks the tree is gone. */
async function cancelAndCheck(t: import('ava').ExecutionContext, setup: string, label: string): Promise<void> {
  const marker = nonce('armed');
  const outcome = await session.shellCancelledOn(`${setup}\necho ${marker}\nsleep 1000`, marker);
  t.is(outcome.status, 'cancelled', outcome.output.slice(0, 300));
  t.true(outcome.output.includes(marker), 'the partial output is kept');
  await assertNothingLeft(t, label);
}

test('a background child (`cmd &`) does not outlive a cancel', async (t) => {
  const sleep = markedSleep();
  await cancelAndCheck(t, `sleep ${sleep.seconds} &`, 'background child');
});

test('a setsid child (new session and process group) does not outlive a cancel', async (t) => {
  const sleep = markedSleep();
  await cancelAndCheck(t, `setsid sleep ${sleep.seconds} & setsid -f sleep ${sleep.seconds}`, 'setsid');
});

test('a nohup child with its output redirected does not outlive a cancel', async (t) => {
  const sleep = markedSleep();
  await cancelAndCheck(t, `nohup sleep ${sleep.seconds} >/dev/null 2>&1 &`, 'nohup');
});

test('a double-forked daemon (re-parented away from the shell) does not outlive a cancel', async (t) => {
  const sleep = markedSleep();
  await cancelAndCheck(
    t,
    `( ( setsid sleep ${sleep.seconds} </dev/null >/dev/null 2>&1 & ) & ); python3 -c 'import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3000)
    os._exit(0)
os.wait()'`,
    'double fork',
  );
});

test('a process ignoring SIGTERM (and SIGHUP, SIGINT) is SIGKILLed after the grace period', async (t) => {
  await cancelAndCheck(
    t,
    `python3 -c 'import signal, time
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT): signal.signal(s, signal.SIG_IGN)
time.sleep(3000)' & trap '' TERM HUP INT`,
    'sigterm ignored',
  );
});

test('a process that forks new orphans in a loop while being killed leaves nothing behind', async (t) => {
  const sleep = markedSleep();
  await cancelAndCheck(t, `( while :; do ( sleep ${sleep.seconds} & ) ; done ) &`, 'fork race');
});

test('a process that stops itself (SIGSTOP) is still ended', async (t) => {
  await cancelAndCheck(t, `python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGSTOP)' &`, 'stopped');
});

test('a finished call (not cancelled) leaves none of its background children running', async (t) => {
  const sleep = markedSleep();
  const outcome = await session.shell(`sleep ${sleep.seconds} & setsid sleep ${sleep.seconds} & nohup sleep ${sleep.seconds} >/dev/null 2>&1 & echo spawned`);
  t.is(outcome.status, 'success', outcome.output);
  await assertNothingLeft(t, 'finished call');
});

test('a wall-clock timeout kills the whole tree, setsid children included', async (t) => {
  const short = await SandboxSession.open({ timeoutSeconds: 3 });
  t.teardown(() => short.close());
  const [shortId = ''] = await short.containerIds();
  const sleep = markedSleep();
  const outcome = await short.shell(`setsid sleep ${sleep.seconds} & nohup sleep ${sleep.seconds} >/dev/null 2>&1 & sleep 1000`);
  t.regex(outcome.text, /ran longer than the time limit/);
  t.deepEqual(await commandProcesses(shortId), [], 'nothing survives the timeout');
  await short.assertAlive(t);
});

test('is_background keeps a job running after its call, and the job ends with the session', async (t) => {
  const own = await SandboxSession.open({ timeoutSeconds: 30 });
  let closed = false;
  t.teardown(() => (closed ? undefined : own.close()));
  const [ownId = ''] = await own.containerIds();
  const sleep = markedSleep();
  const outcome = await own.shell(`sleep ${sleep.seconds}`, { background: true });
  t.is(outcome.status, 'success', outcome.output);
  const running = await commandProcesses(ownId);
  t.true(
    running.some((row) => sleep.pattern.test(row)),
    `the background job runs: ${running.join('; ')}`,
  );
  await own.assertAlive(t);
  await own.close();
  closed = true;
  const left = (await dockerText(['ps', '-a', '-q', '--no-trunc'])).split('\n').filter((id) => id === ownId);
  t.deepEqual(left, [], 'closing the session removes its container, and the job with it');
});
