/**
 * The per-call reaper is the process that owns a call's tree and ends it.
 * A command must not be able to signal it at any moment, including the
 * instant it is being started (when the reaper briefly takes the command's
 * uid to spawn it): a reaper stopped or killed by its own command would
 * leave the call without an owner. Each attack is repeated, because a race
 * that is lost once is still a race.
 */
import anyTest from 'ava';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses, type CallOutcome } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/reaper');
const test = docker.serial;

const WALL_SECONDS = 4;
/** How long a call may take before it counts as hung: far beyond the wall timeout. */
const HUNG_AFTER_MS = 45_000;
const ROUNDS = 25;
/** A session of its own per test, so a reaper left broken by one attack cannot blur the next. */
async function freshSession(t: import('ava').ExecutionContext): Promise<{ session: SandboxSession; containerId: string }> {
  const session = await SandboxSession.open({ timeoutSeconds: WALL_SECONDS });
  t.teardown(() => session.close());
  const [containerId = ''] = await session.containerIds();
  return { session, containerId };
}

/** The call's outcome, or `hung` when it has not ended long after its wall-clock limit. */
async function shellOrHung(session: SandboxSession, command: string): Promise<CallOutcome | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), HUNG_AFTER_MS);
  });
  try {
    return await Promise.race([session.shell(command), hung]);
  } finally {
    clearTimeout(timer);
  }
}

test('a command can never signal its own reaper, not even while being started (SIGCONT probe, repeated)', async (t) => {
  const { session } = await freshSession(t);
  let allowed = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const outcome = await session.shell('kill -CONT $PPID 2>/dev/null; echo "first=$?"; kill -CONT $PPID 2>/dev/null; echo "second=$?"');
    allowed += [...outcome.output.matchAll(/(first|second)=0/g)].length;
  }
  t.is(allowed, 0, `the command signalled its reaper in ${allowed} of ${ROUNDS * 2} attempts`);
  await session.assertAlive(t);
});

test('a command that SIGSTOPs its reaper at start neither hangs its call past the wall timeout nor the session', async (t) => {
  const { session, containerId } = await freshSession(t);
  const hung: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const outcome = await shellOrHung(session, 'kill -STOP $PPID 2>/dev/null; echo "stop=$?"; sleep 1');
    if (outcome === 'hung') {
      hung.push(round);
      break;
    }
  }
  t.deepEqual(hung, [], `a call hung ${HUNG_AFTER_MS / 1000} s after its ${WALL_SECONDS} s wall-clock limit`);
  t.deepEqual(await commandProcesses(containerId), [], 'no process runs as the command user (a reaper frozen mid-spawn would)');
  await session.assertAlive(t);
});

test('a command that SIGKILLs its reaper at start leaves no process behind and the call reports what ran', async (t) => {
  const { session, containerId } = await freshSession(t);
  const problems: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const outcome = await shellOrHung(
      session,
      `kill -KILL $PPID 2>/dev/null; echo "kill=$?"; setsid sleep 30${round} & nohup sleep 31${round} >/dev/null 2>&1 &`,
    );
    if (outcome === 'hung') {
      problems.push(`round ${round}: hung`);
      break;
    }
    const left = await commandProcesses(containerId);
    if (left.length > 0) problems.push(`round ${round}: survivors ${left.join('; ')}`);
    if (/kill=0/.test(outcome.output)) problems.push(`round ${round}: the reaper was killed by its command`);
    if (outcome.status === 'error' && /reaper died/.test(outcome.text)) problems.push(`round ${round}: the command ran but the call says it never started`);
  }
  t.deepEqual(problems, []);
  await session.assertAlive(t);
});
