/**
 * The output budget: past `forwardBytes` the supervisor only counts a
 * command's output, in the container, and sends each stream's end, so a
 * flood does not cross the engine. What arrives plus what was reported as
 * dropped is the whole output, byte and line feed for line feed.
 */
import anyTest, { type ExecutionContext } from 'ava';
import type { SkippedOutput } from '../../../src/backends/backend.js';
import { SANDBOX_TEST_ENV, commandProcesses, requireDocker, useSandboxBackend } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/output-budget');
const sandbox = useSandboxBackend(test);

interface Received {
  stdout: Buffer;
  stderr: Buffer;
  /** Bytes that crossed the engine. */
  sent: number;
  skipped: { bytes: number; lineFeeds: number; reports: number };
  /** Whether a chunk came after a stream's last skip report (its kept end), per stream. */
  order: string[];
}

async function run(
  t: ExecutionContext,
  command: string,
  options: { mode: 'pty' | 'pipes'; forwardBytes: number; tailBytes: number; drainBytesPerSecond?: number },
): Promise<Received> {
  const session = await sandbox.session(t);
  const spawned = await session.spawn({
    command,
    cwd: '.',
    env: { ...SANDBOX_TEST_ENV },
    mode: options.mode,
    outputBudget: { forwardBytes: options.forwardBytes, tailBytes: options.tailBytes, drainBytesPerSecond: options.drainBytesPerSecond ?? 0 },
  });
  const chunks: Record<'stdout' | 'stderr', Buffer[]> = { stdout: [], stderr: [] };
  const received: Received = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), sent: 0, skipped: { bytes: 0, lineFeeds: 0, reports: 0 }, order: [] };
  spawned.onSkipped!((skipped: SkippedOutput, stream) => {
    received.skipped.bytes += skipped.bytes;
    received.skipped.lineFeeds += skipped.lineFeeds;
    received.skipped.reports++;
    if (received.order.at(-1) !== `skip ${stream}`) received.order.push(`skip ${stream}`);
  });
  spawned.onData((chunk, stream) => {
    received.sent += chunk.length;
    chunks[stream].push(Buffer.from(chunk));
    if (received.order.at(-1) !== `data ${stream}`) received.order.push(`data ${stream}`);
  });
  await spawned.exited;
  received.stdout = Buffer.concat(chunks.stdout);
  received.stderr = Buffer.concat(chunks.stderr);
  return received;
}

const lineFeeds = (bytes: Buffer): number => bytes.reduce((count, byte) => count + (byte === 0x0a ? 1 : 0), 0);

test('a 200 MB flood sends its first bytes and its end; the rest is only counted, exactly', async (t) => {
  // A backstop, past ava's 120 s without a result: 200 MB through gVisor's pipes took 67 s in CI run 27.
  t.timeout(300_000);
  const total = 200 * 1024 * 1024;
  const received = await run(t, `head -c ${total - 4} /dev/zero | tr '\\0' x; printf 'END\\n'`, { mode: 'pipes', forwardBytes: 1 << 20, tailBytes: 4096 });
  t.is(received.sent, (1 << 20) + 4096, 'only the budget and the kept end crossed the engine');
  t.is(received.sent + received.skipped.bytes, total);
  t.is(received.skipped.lineFeeds, 0);
  t.true(received.stdout.subarray(-4).equals(Buffer.from('END\n')), 'the true end arrives');
  t.true(received.stdout.subarray(0, 1 << 20).every((byte) => byte === 0x78));
  t.deepEqual(received.order, ['data stdout', 'skip stdout', 'data stdout'], 'the drop report comes between the start and the kept end');
});

test('line feeds past the budget are counted in the container: sent and dropped add up to the whole output', async (t) => {
  // seq 1 2000000: 14,888,896 bytes and 2,000,000 lines.
  const received = await run(t, 'seq 1 2000000', { mode: 'pipes', forwardBytes: 256 * 1024, tailBytes: 1000 });
  t.is(received.sent + received.skipped.bytes, 14_888_896);
  t.is(lineFeeds(received.stdout) + received.skipped.lineFeeds, 2_000_000);
  t.true(received.stdout.toString().endsWith('1999999\n2000000\n'));
});

test('in pipes mode the budget is shared by both streams, and each keeps its own end', async (t) => {
  const received = await run(t, `seq 1 300000; seq 1 300000 >&2; echo OUT-END; echo ERR-END >&2`, { mode: 'pipes', forwardBytes: 100_000, tailBytes: 64 });
  t.true(received.stdout.length + received.stderr.length <= 100_000 + 2 * 64);
  t.is(received.sent + received.skipped.bytes, 2 * 1_988_895 + 8 + 8);
  t.true(received.stdout.toString().endsWith('\nOUT-END\n'));
  t.true(received.stderr.toString().endsWith('\nERR-END\n'));
});

test('pty mode: the merged stream keeps its end past the budget', async (t) => {
  const received = await run(t, `head -c 30000000 /dev/zero | tr '\\0' y; echo; echo PTY-END`, { mode: 'pty', forwardBytes: 65_536, tailBytes: 256 });
  t.true(received.sent <= 65_536 + 256);
  t.regex(received.stdout.toString(), /PTY-END\r?\n$/);
  t.true(received.skipped.bytes > 29_000_000);
});

test('an output within the budget is sent whole, with no report', async (t) => {
  const received = await run(t, 'head -c 50000 /dev/zero | tr "\\0" z', { mode: 'pipes', forwardBytes: 50_000, tailBytes: 10 });
  t.is(received.sent, 50_000);
  t.is(received.skipped.reports, 0);
});

test('a bad budget is refused before anything runs, naming the field', async (t) => {
  const session = await sandbox.session(t);
  await t.throwsAsync(session.spawn({ command: 'true', cwd: '.', env: {}, mode: 'pipes', outputBudget: { forwardBytes: -1, tailBytes: 0 } }), {
    instanceOf: RangeError,
    message: 'spawn: options.outputBudget.forwardBytes must be at least 0',
  });
});

test('past the budget at a drain rate, the command is read slowly and its counts and end are still exact', async (t) => {
  // 2.4 MB past a 1 MB budget, drained at 4 MB/s: under a second of pacing.
  const received = await run(t, 'seq 1 500000', { mode: 'pipes', forwardBytes: 1 << 20, tailBytes: 100, drainBytesPerSecond: 4 << 20 });
  t.is(received.sent + received.skipped.bytes, 3_388_895);
  t.is(lineFeeds(received.stdout) + received.skipped.lineFeeds, 500_000);
  t.true(received.stdout.toString().endsWith('499999\n500000\n'));
});

test('a paced flood is cancelled at once: nothing of it is left and the session goes on', async (t) => {
  const session = await sandbox.session(t);
  const spawned = await session.spawn({
    command: 'head -c 1000000000 /dev/zero | tr "\\0" x',
    cwd: '.',
    env: { ...SANDBOX_TEST_ENV },
    mode: 'pty',
    outputBudget: { forwardBytes: 65_536, tailBytes: 1024, drainBytesPerSecond: 1 << 20 },
  });
  const skipping = new Promise<void>((resolve) => spawned.onSkipped!(() => resolve()));
  spawned.onData(() => undefined);
  await skipping;
  await spawned.kill({ graceMs: 0 });
  const status = await spawned.exited;
  t.is(status.signal, 'SIGKILL');
  t.deepEqual(await commandProcesses(session.containerId), []);
  const next = await session.spawn({ command: 'echo next', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pipes' });
  let text = '';
  next.onData((chunk) => (text += Buffer.from(chunk).toString()));
  await next.exited;
  t.is(text, 'next\n');
});
