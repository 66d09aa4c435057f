import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import type { WorkspaceInfo } from '../../src/tools/define-tool.js';
import type { Tool } from '../../src/tools/tool.js';
import { createTestPool } from '../helpers/pool.js';

const root = mkdtempSync(join(tmpdir(), 'toolcell-pool-'));
const workspace: WorkspaceInfo = { roots: [root], stateDir: join(root, '.toolcell') };

function byName(tools: Tool<unknown>[], name: string): Tool<unknown> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

function params(tool: Tool<unknown>, raw: unknown): unknown {
  const validation = tool.validateParams(raw);
  if (!validation.ok) throw new Error(validation.error);
  return validation.params;
}

test('a tool executes in a worker thread, not on the main thread', async (t) => {
  const pool = createTestPool(t);
  const tools = await pool.createTools({ workspace });
  const result = await byName(tools, 'noop').execute({}, new AbortController().signal);
  t.true(isMainThread);
  t.is(result.llmContent, 'ok');
});

test('live output reaches the caller through the call port', async (t) => {
  const pool = createTestPool(t);
  const slow = byName(await pool.createTools({ workspace }), 'slow');
  const updates: unknown[] = [];
  const result = await slow.execute(params(slow, { ms: 100 }), new AbortController().signal, (output) => updates.push(output));
  t.is(result.llmContent, 'slow: done');
  t.true(updates.length > 0);
  t.regex(String(updates[0]), /^slow: tick \d+$/);
});

test('abort is cooperative: the tool stops and returns its partial result, the worker survives', async (t) => {
  const pool = createTestPool(t, { threads: 1 });
  const tools = await pool.createTools({ workspace });
  const slow = byName(tools, 'slow');
  const controller = new AbortController();
  const running = slow.execute(params(slow, { ms: 60_000 }), controller.signal, () => controller.abort());
  const result = await running;
  t.regex(String(result.llmContent), /stopped after/);
  t.is(result.error, undefined);
  t.is((await byName(tools, 'noop').execute({}, new AbortController().signal)).llmContent, 'ok');
});

test('a tool that throws gives an error result', async (t) => {
  const pool = createTestPool(t);
  const result = await byName(await pool.createTools({ workspace }), 'throws').execute({}, new AbortController().signal);
  t.is(result.error?.type, 'execution_failed');
  t.regex(result.error?.message ?? '', /boom from the tool/);
});

test('a tool that blocks its thread is ended by the per-call time limit and the pool recovers', async (t) => {
  const pool = createTestPool(t, { threads: 1, callTimeoutMs: 300, cancelGraceMs: 100 });
  const tools = await pool.createTools({ workspace });
  const result = await byName(tools, 'spin').execute({}, new AbortController().signal);
  t.is(result.error?.type, 'execution_timeout');
  t.is((await byName(tools, 'noop').execute({}, new AbortController().signal)).llmContent, 'ok');
});

test('cancelling a tool that blocks its thread terminates the worker after the grace period', async (t) => {
  const pool = createTestPool(t, { threads: 1, cancelGraceMs: 100 });
  const tools = await pool.createTools({ workspace });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const result = await byName(tools, 'spin').execute({}, controller.signal);
  t.is(result.error?.type, 'cancelled');
  t.is((await byName(tools, 'noop').execute({}, new AbortController().signal)).llmContent, 'ok');
});

test('a call queued behind one whose worker is terminated runs on the replacement worker, once', async (t) => {
  const pool = createTestPool(t, { threads: 1, cancelGraceMs: 100 });
  const tools = await pool.createTools({ workspace });
  const controller = new AbortController();
  const spinning = byName(tools, 'spin').execute({}, controller.signal);
  // Posted to the same (only) worker while `spin` holds it: it waits there, unstarted.
  const echo = byName(tools, 'echo');
  const queued = echo.execute(params(echo, { text: 'after' }), new AbortController().signal);
  setTimeout(() => controller.abort(), 100);
  t.is((await spinning).error?.type, 'cancelled');
  const result = await queued;
  t.is(result.error, undefined);
  t.regex(String(result.llmContent), /after/);
});

test('a call cancelled while it waits behind a blocked one ends as cancelled and never runs', async (t) => {
  const pool = createTestPool(t, { threads: 1, cancelGraceMs: 100 });
  const tools = await pool.createTools({ workspace });
  const spinController = new AbortController();
  const spinning = byName(tools, 'spin').execute({}, spinController.signal);
  const waitingController = new AbortController();
  const waiting = byName(tools, 'noop').execute({}, waitingController.signal);
  setTimeout(() => waitingController.abort(), 50);
  t.is((await waiting).error?.type, 'cancelled');
  spinController.abort();
  t.is((await spinning).error?.type, 'cancelled');
  t.is((await byName(tools, 'noop').execute({}, new AbortController().signal)).llmContent, 'ok');
});

test('read-only calls posted together still get their results when a call of their group makes the pool end its worker', async (t) => {
  const pool = createTestPool(t, { threads: 1, cancelGraceMs: 100 });
  const tools = await pool.createTools({ workspace });
  const echo = byName(tools, 'echo');
  // The worker has started and loaded the tools, so the cancel below finds `read_spin` running.
  await echo.execute(params(echo, { text: 'warm' }), new AbortController().signal);
  const controller = new AbortController();
  // One tick, more calls than the worker holds: they go in groups, `read_spin` last in the second.
  const echoes = Array.from({ length: 5 }, (_, i) => echo.execute(params(echo, { text: `e${i}` }), new AbortController().signal));
  const spinning = byName(tools, 'read_spin').execute({}, controller.signal);
  setTimeout(() => controller.abort(), 300);
  t.regex((await spinning).error?.message ?? '', /did not stop .* its worker was terminated/);
  const results = await Promise.all(echoes);
  t.deepEqual(
    results.map((result) => result.error?.type ?? result.llmContent),
    ['e0', 'e1', 'e2', 'e3', 'e4'],
  );
});

test('a tool that exhausts its heap gives worker_out_of_memory and the pool recovers', async (t) => {
  const pool = createTestPool(t, { threads: 1, maxHeapMb: 64 });
  const tools = await pool.createTools({ workspace });
  const result = await byName(tools, 'heap_bomb').execute({}, new AbortController().signal);
  t.is(result.error?.type, 'worker_out_of_memory');
  t.is((await byName(tools, 'noop').execute({}, new AbortController().signal)).llmContent, 'ok');
});

test('options are checked and the bad one is named', (t) => {
  t.throws(() => createTestPool(t, { threads: 0 }), { instanceOf: RangeError, message: /options\.threads/ });
  t.throws(() => createTestPool(t, { callTimeoutMs: -5 }), { instanceOf: RangeError, message: /options\.callTimeoutMs/ });
});

test("calls with an owner get its fair share: one owner's slow calls never make another owner's call wait", async (t) => {
  const pool = createTestPool(t, { threads: 2 });
  const hostile = byName(await pool.createTools({ workspace, owner: 'hostile' }), 'slow');
  const other = byName(await pool.createTools({ workspace, owner: 'other' }), 'noop');
  const controller = new AbortController();
  t.teardown(() => controller.abort());
  let hostileDone = 0;
  const slow = [1, 2, 3].map(() => hostile.execute(params(hostile, { ms: 600_000 }), controller.signal).finally(() => hostileDone++));
  // The other owner's call is answered while every hostile call is still running or waiting.
  const answered = await other.execute({}, AbortSignal.timeout(60_000));
  t.is(answered.llmContent, 'ok');
  t.is(hostileDone, 0);
  controller.abort();
  const ended = await Promise.all(slow);
  t.true(
    ended.every((result) => result.error?.type === 'cancelled' || String(result.llmContent).startsWith('slow: stopped')),
    JSON.stringify(ended),
  );
});

test("a tool made with its owner's callTimeoutMs is held to it, not to the pool's", async (t) => {
  const pool = createTestPool(t, { callTimeoutMs: 600_000 });
  const spin = byName(await pool.createTools({ workspace, owner: 'tenant', callTimeoutMs: 200 }), 'spin');
  const result = await spin.execute({}, new AbortController().signal);
  t.is(result.error?.type, 'execution_timeout');
  t.regex(String(result.llmContent), /time limit of 200 ms/);
  await t.throwsAsync(pool.createTools({ workspace, callTimeoutMs: 0 }), { instanceOf: RangeError, message: /callTimeoutMs/ });
});

test('createTools refuses bad options naming the field', async (t) => {
  const pool = createTestPool(t);
  await t.throwsAsync(pool.createTools({ workspace: { roots: [], stateDir: '/tmp/x' } }), {
    instanceOf: TypeError,
    message: 'WorkerPool.createTools: options.workspace must be a WorkspaceInfo with at least one root',
  });
  await t.throwsAsync(pool.createTools({ workspace: undefined as never }), { instanceOf: TypeError, message: /options\.workspace must be a WorkspaceInfo/ });
});

test('a tool module that fails to load in the worker threads fails each call at once, with its reason', async (t) => {
  // A backstop: before, the thread's start failed, Piscina started another that failed the same way, and the call waited for ever.
  t.timeout(60_000);
  const pool = createTestPool(t, { threads: 1, toolModules: [new URL('../fixtures/tools/worker-refusing-tools.js', import.meta.url).href] });
  const listDirectory = byName(await pool.createTools({ workspace }), 'list_directory');
  for (const attempt of [1, 2]) {
    const result = await listDirectory.execute(params(listDirectory, { dir_path: '.' }), new AbortController().signal);
    t.is(result.error?.type, 'worker_crashed', `call ${attempt}`);
    t.regex(String(result.llmContent), /the file-tool worker could not load: this module refuses worker threads/, `call ${attempt}`);
  }
});
