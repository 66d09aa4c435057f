/**
 * The host-side terminal renderer (a headless xterm in the shell thread)
 * interprets escape sequences a command prints. A few bytes can ask it for
 * enormous work: repeat the last character two billion times (CSI b),
 * scroll or insert a billion lines (CSI S, T, L, M), tab a billion stops
 * (CSI I, Z). Rendering is off the main thread, but one shell thread serves
 * every session of a process, so a stalled renderer stalls every tenant and
 * the call itself can no longer time out. Such sequences must cost what the
 * screen can show, not what the parameter says.
 *
 * Each attack runs in a runtime of its own (its own shell thread), so a
 * stall is contained to that test. The hang guard is far beyond the wall
 * limit (it detects a stall, it does not measure speed).
 */
import anyTest from 'ava';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, type CallOutcome } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/renderer');
// OPEN FINDING (SECURITY.md, "escape sequences cost what the screen shows"): these attacks still
// stall the shell thread for hours, which would hang the whole suite, so they are skipped until the
// renderer clamps escape-sequence counts. Remove `.skip` when fixing it.
const test = docker.serial.skip;

const WALL_SECONDS = 5;
const HUNG_AFTER_MS = 90_000;
const MiB = 1024 * 1024;

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), ms);
  });
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `command` in a fresh runtime; resolves with its outcome or `hung`, and whether the session still answers. */
async function attack(t: import('ava').ExecutionContext, command: string): Promise<{ outcome: CallOutcome | 'hung'; session: SandboxSession }> {
  const session = await SandboxSession.open({ timeoutSeconds: WALL_SECONDS });
  await session.shell('true'); // the container is up before the clock matters
  const outcome = await within(session.shell(command), HUNG_AFTER_MS);
  if (outcome !== 'hung') t.teardown(() => session.close());
  return { outcome, session };
}

test('scroll, insert and delete with a billion lines (CSI S, T, L, M) do not stall rendering', async (t) => {
  const { outcome, session } = await attack(t, "printf '\\033[999999999S\\033[999999999T\\033[999999999L\\033[999999999M'; echo rendered");
  if (outcome === 'hung') {
    t.fail(`the call had not ended ${HUNG_AFTER_MS / 1000} s after a ${WALL_SECONDS} s wall-clock limit: the renderer is stuck`);
    return;
  }
  t.regex(outcome.output, /rendered/);
  await session.assertAlive(t);
});

test('tab stops a billion times (CSI I, Z) do not stall rendering', async (t) => {
  const { outcome, session } = await attack(t, "for i in 1 2 3 4 5 6 7 8 9 10; do printf '\\033[999999999I\\033[999999999Z'; done; echo rendered");
  if (outcome === 'hung') {
    t.fail(`the call had not ended ${HUNG_AFTER_MS / 1000} s after a ${WALL_SECONDS} s wall-clock limit: the renderer is stuck`);
    return;
  }
  t.regex(outcome.output, /rendered/);
  await session.assertAlive(t);
});

test('a huge repeat count (CSI REP) does not amplify a few bytes into host CPU and memory', async (t) => {
  // 10^8 repeats: bounded even where it is not capped (seconds, hundreds of MB), so the test cannot wreck the machine.
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const { outcome, session } = await attack(t, "printf 'x\\033[100000000b'; echo rendered");
  clearInterval(sampler);
  if (outcome === 'hung') {
    t.fail('the call did not end: the renderer is stuck');
    return;
  }
  t.true(outcome.text.length <= 45_000, `model text is ${outcome.text.length} characters`);
  t.true(peak - before < 64 * MiB, `12 bytes of output grew the host's resident memory by ${Math.round((peak - before) / MiB)} MB`);
  await session.assertAlive(t);
});
