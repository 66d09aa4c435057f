/**
 * The host-side terminal renderer (a headless xterm in the shell thread)
 * interprets escape sequences a command prints. A few bytes can ask it for
 * enormous work: repeat the last character a hundred million times (CSI b),
 * scroll or insert a billion lines (CSI S, T, L, M), tab a billion stops
 * (CSI I, Z). Rendering is off the main thread, but one shell thread serves
 * every session of a process, so a stalled renderer stalls every tenant and
 * the call itself can no longer time out. Such sequences must cost what the
 * screen can show, not what the parameter says. Sequences that are cheap
 * to send and cost a screenful each (a full reset, two bytes) are held to a
 * render time budget instead.
 *
 * Each attack runs through the CLI in a process of its own, which is
 * SIGKILLed if it has not finished long after its wall-clock limit: a stall
 * fails its test without hanging the suite. The guard detects a stall; it
 * does not measure speed.
 */
import anyTest from 'ava';
import { requireDocker } from '../helpers/docker.js';
import { makeTempDir, parseShellBlock, responseText, runCli, type CliRun } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/renderer');
const test = docker.serial;

const WALL_SECONDS = 5;
/**
 * The reset flood must end by itself, not at the wall limit: cut mid-stream,
 * the screen after its last reset is empty and nothing is left to check.
 * Its 4 MB cross the renderer's queue slowly on a loaded machine.
 */
const FLOOD_WALL_SECONDS = 40;
const KILL_AFTER_MS = 90_000;
const MiB = 1024 * 1024;

/** Runs `command` as the first of a batch, then a benign call; the CLI is killed if it stalls. */
async function attack(
  t: import('ava').ExecutionContext,
  command: string,
  options: { wallSeconds?: number } = {},
): Promise<{ run: CliRun; output: string; after: string }> {
  const workspace = await makeTempDir(t);
  const run = await runCli(
    [
      { id: 'attack', name: 'run_shell_command', args: { command } },
      { id: 'after', name: 'run_shell_command', args: { command: 'echo still-answering' } },
    ],
    { workspace, timeoutSeconds: options.wallSeconds ?? WALL_SECONDS, interruptAfterMs: KILL_AFTER_MS, killSignal: 'SIGKILL' },
  );
  const output = parseShellBlock(responseText(run.responses.get('attack')))?.output ?? '';
  const after = parseShellBlock(responseText(run.responses.get('after')))?.output ?? '';
  return { run, output, after };
}

function assertNotStalled(t: import('ava').ExecutionContext, run: CliRun): boolean {
  if (run.signal === 'SIGKILL') {
    t.fail(`toolcell had not finished ${KILL_AFTER_MS / 1000} s after its wall-clock limit: the renderer is stuck`);
    return false;
  }
  t.is(run.exitCode, 0, run.stderr);
  return true;
}

test('scroll, insert and delete with a billion lines (CSI S, T, L, M) do not stall rendering', async (t) => {
  const { run, output, after } = await attack(t, "printf '\\033[999999999S\\033[999999999T\\033[999999999L\\033[999999999M'; echo rendered");
  if (!assertNotStalled(t, run)) return;
  t.regex(output, /rendered/);
  t.regex(after, /still-answering/, 'the other call of the batch was answered');
});

test('tab stops a billion times (CSI I, Z) do not stall rendering', async (t) => {
  const { run, output, after } = await attack(t, "for i in 1 2 3 4 5 6 7 8 9 10; do printf '\\033[999999999I\\033[999999999Z'; done; echo rendered");
  if (!assertNotStalled(t, run)) return;
  t.regex(output, /rendered/);
  t.regex(after, /still-answering/);
});

test('a huge repeat count (CSI REP) does not amplify a few bytes into host memory', async (t) => {
  // 10^8 repeats: bounded even where they are not clamped (seconds, hundreds of MB), so the test cannot wreck the machine.
  const baseline = await attack(t, 'echo baseline');
  const { run, output, after } = await attack(t, "printf 'x\\033[100000000b'; echo rendered");
  if (!assertNotStalled(t, run)) return;
  t.true(output.length <= 45_000, `model text is ${output.length} characters`);
  const growth = run.peakRssBytes - baseline.run.peakRssBytes;
  t.true(growth < 64 * MiB, `12 bytes of output grew toolcell's peak resident memory by ${Math.round(growth / MiB)} MB`);
  t.regex(after, /still-answering/);
});

test('megabytes of full resets (ESC c) end at the render budget, not minutes later, and the end is shown', async (t) => {
  // 4 MB of resets cost about a minute of emulation; the budget is 10 s.
  const { run, output, after } = await attack(t, "head -c 2000000 /dev/zero | tr '\\0' c | sed 's/c/\\x1bc/g'; echo; echo rendered", {
    wallSeconds: FLOOD_WALL_SECONDS,
  });
  if (!assertNotStalled(t, run)) return;
  t.notRegex(responseText(run.responses.get('attack')), /ran longer than the time limit/, 'the flood ended by itself');
  t.regex(output, /took more than 10 s to render/);
  t.regex(output, /rendered\s*$/);
  t.regex(after, /still-answering/);
});
