import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditLog } from '../../src/hosting/audit/audit-log.js';
import type { HostingEvent } from '../../src/hosting/operations/hosting-events.js';
import { packageRoot } from '../../src/paths.js';
import { readAuditLines } from '../helpers/audit-log.js';

const writer = join(packageRoot, 'dist', 'test', 'fixtures', 'hosting', 'audit-writer.js');

async function tempLog(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-audit-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'audit.jsonl');
}

const call = (seq: number, pad = ''): HostingEvent => ({
  event: 'tool_call',
  tenant: 'acme',
  session: 's1',
  callId: `c${seq}`,
  tool: 'run_shell_command',
  // The pad goes into the command; tests of long lines raise the log's bounds past it (`LONG_LINES`).
  args: { command: `curl -H "Authorization: Bearer abcdefgh12345678" https://x/${seq}${pad}`, seq },
  decision: 'allow',
  outcome: 'success',
  exitCode: 0,
  durationMs: 3,
  outputBytes: 10,
});

/** Bounds above the longest pad here: what these tests check is how long lines are written, not how they are cut. */
const LONG_LINES = { maxLineBytes: 1024 * 1024, maxStringChars: 1024 * 1024 };

function startWriter(path: string, pad: number, inFlight: number): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(process.execPath, [writer, path, String(pad), String(inFlight)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`writer exited ${code} before it was ready`)));
  });
  return { child, ready };
}

/** Polls until `check` holds; the backstop only stops a broken test from hanging. */
async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('a line holds time, event, tenant and the fields, with the arguments redacted', async (t) => {
  const path = await tempLog(t);
  const log = await AuditLog.open({ path, now: () => new Date('2026-01-02T03:04:05.000Z') });
  await log.record(call(7));
  await log.record({ event: 'auth_failure', remoteAddress: '10.0.0.9', reason: 'unknown_key' });
  await log.close();
  const [first, second] = await readAuditLines(path);
  t.deepEqual(first, {
    time: '2026-01-02T03:04:05.000Z',
    event: 'tool_call',
    tenant: 'acme',
    session: 's1',
    callId: 'c7',
    tool: 'run_shell_command',
    args: { command: 'curl -H "Authorization: Bearer [REDACTED]" https://x/7', seq: 7 },
    decision: 'allow',
    outcome: 'success',
    exitCode: 0,
    durationMs: 3,
    outputBytes: 10,
  });
  t.deepEqual(second, { time: '2026-01-02T03:04:05.000Z', event: 'auth_failure', tenant: null, remoteAddress: '10.0.0.9', reason: 'unknown_key' });
  t.is((await stat(path)).mode & 0o777, 0o600);
});

test('an existing log is appended to, never truncated', async (t) => {
  const path = await tempLog(t);
  await writeFile(path, '{"event":"earlier"}\n');
  const log = await AuditLog.open({ path });
  await log.record(call(1));
  await log.close();
  const lines = await readAuditLines(path);
  t.is(lines.length, 2);
  t.is(lines[0]!['event'], 'earlier');
});

test('a log whose last line was torn (a crash, a full disk) is appended to on a line of its own: the torn line stays one bad line, the new ones parse', async (t) => {
  const path = await tempLog(t);
  await writeFile(path, '{"event":"earlier"}\n{"event":"to');
  const log = await AuditLog.open({ path });
  await log.record(call(1));
  await log.close();
  t.deepEqual((await readFile(path, 'utf8')).split('\n').slice(0, 2), ['{"event":"earlier"}', '{"event":"to']);
  const [, ...rest] = (await readFile(path, 'utf8')).split('\n');
  t.like(JSON.parse(rest[1]!) as Record<string, unknown>, { event: 'tool_call', callId: 'c1' });
  t.is(rest[2], '');
});

test('concurrent records, from two descriptors at once, each stay one whole line', async (t) => {
  const path = await tempLog(t);
  const [a, b] = await Promise.all([AuditLog.open({ path, ...LONG_LINES }), AuditLog.open({ path, ...LONG_LINES })]);
  // Lines from 10 bytes to 200 KB: large writes are where interleaving would show.
  const sizes = [0, 100, 5_000, 70_000, 200_000];
  await Promise.all(Array.from({ length: 200 }, (_, seq) => (seq % 2 ? a : b).record(call(seq, 'y'.repeat(sizes[seq % sizes.length]!)))));
  await Promise.all([a.close(), b.close()]);
  const lines = await readAuditLines(path);
  t.is(lines.length, 200);
  t.deepEqual(
    lines.map((line) => (line['args'] as { seq: number }).seq).sort((x, y) => x - y),
    Array.from({ length: 200 }, (_, i) => i),
  );
  t.true((await readFile(path, 'utf8')).endsWith('\n'));
});

test('records of one log keep the order they were made in', async (t) => {
  const path = await tempLog(t);
  const log = await AuditLog.open({ path, ...LONG_LINES });
  await Promise.all(Array.from({ length: 50 }, (_, seq) => log.record(call(seq, seq % 3 ? '' : 'z'.repeat(100_000)))));
  await log.close();
  t.deepEqual(
    (await readAuditLines(path)).map((line) => line['callId']),
    Array.from({ length: 50 }, (_, i) => `c${i}`),
  );
});

test('a record after close is refused with audit_log_failed', async (t) => {
  const path = await tempLog(t);
  const log = await AuditLog.open({ path });
  await log.close();
  await t.throwsAsync(log.record(call(1)), { code: 'audit_log_failed' } as never);
});

test('a log that cannot be opened is refused with audit_log_failed, naming the file', async (t) => {
  const error = await t.throwsAsync(AuditLog.open({ path: '/nonexistent-dir/audit.jsonl' }));
  t.is((error as { code?: string }).code, 'audit_log_failed');
  t.regex(error!.message, /\/nonexistent-dir\/audit\.jsonl/);
});

test('rotation: the file renamed away, then SIGHUP, and the writer goes on in a fresh file, no line lost or doubled', async (t) => {
  const path = await tempLog(t);
  const { child, ready } = startWriter(path, 0, 1);
  t.teardown(() => void child.kill('SIGKILL'));
  await ready;
  await waitFor(async () => (await readAuditLines(path)).length >= 20, '20 lines before rotation');
  await rename(path, `${path}.1`);
  child.kill('SIGHUP');
  await waitFor(async () => (await stat(path).catch(() => undefined)) !== undefined && (await readAuditLines(path)).length >= 20, '20 lines after rotation');
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  t.deepEqual(await exited, [0, null]);
  const rotated = await readAuditLines(`${path}.1`);
  const fresh = await readAuditLines(path);
  const seqs = [...rotated, ...fresh].map((line) => (line['args'] as { seq: number }).seq);
  t.deepEqual(
    seqs,
    Array.from({ length: seqs.length }, (_, i) => i),
    'every line in exactly one file, in order',
  );
  t.true(rotated.length >= 20 && fresh.length >= 20);
});

test('kill -9 of a process writing long lines leaves the log parseable up to its last whole line', async (t) => {
  const path = await tempLog(t);
  // 1 MB lines, 4 in flight: a kill is likely to land inside a write.
  const { child, ready } = startWriter(path, 1_000_000, 4);
  t.teardown(() => void child.kill('SIGKILL'));
  await ready;
  await waitFor(async () => (await stat(path)).size > 20_000_000, '20 MB written');
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  t.deepEqual(await exited, [null, 'SIGKILL']);
  const lines = await readAuditLines(path);
  t.true(lines.length >= 20);
  for (const [index, line] of lines.entries()) t.is((line['args'] as { seq: number }).seq, index);
});
