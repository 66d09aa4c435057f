/**
 * A caller's WorkBudget in the worker pool: each call waits for `admit`
 * before it takes a worker, and its thread's CPU time is charged once it
 * ends (its execution's time when its worker had to be ended).
 */
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import type { WorkBudget } from '../../src/contracts/work-budget.js';
import type { WorkspaceInfo } from '../../src/tools/define-tool.js';
import type { Tool } from '../../src/tools/tool.js';
import { createTestPool } from '../helpers/pool.js';

const root = mkdtempSync(join(tmpdir(), 'toolcell-budget-'));
const workspace: WorkspaceInfo = { roots: [root], stateDir: join(root, '.toolcell') };

/** A budget that records what it is charged and admits when told to (or at once). */
class RecordingBudget implements WorkBudget {
  readonly charges: number[] = [];
  admits = 0;
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;

  /** Admits nothing until `open()`. */
  hold(): void {
    this.#gate = new Promise((resolve) => (this.#open = resolve));
  }

  open(): void {
    this.#open?.();
    this.#gate = undefined;
  }

  async admit(signal?: AbortSignal): Promise<void> {
    this.admits++;
    if (!this.#gate) return;
    await new Promise<void>((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      void this.#gate!.then(resolve);
    });
  }

  charge(cpuMs: number): void {
    this.charges.push(cpuMs);
  }
}

function byName(tools: Tool<unknown>[], name: string): Tool<unknown> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

test("a call's CPU time in its worker is charged to its budget, after it was admitted", async (t) => {
  const pool = createTestPool(t);
  const budget = new RecordingBudget();
  const burn = byName(await pool.createTools({ workspace, owner: 'acme', budget }), 'burn');
  const result = await burn.execute({ cpuMs: 80 }, new AbortController().signal);
  t.is(result.error, undefined);
  t.is(budget.admits, 1);
  t.is(budget.charges.length, 1);
  t.true(budget.charges[0]! >= 80, `charged ${budget.charges[0]} ms for 80 ms of CPU`);
});

test('a call whose budget does not admit it waits before it takes a worker; cancelled meanwhile, it never runs and costs nothing', async (t) => {
  const pool = createTestPool(t);
  const budget = new RecordingBudget();
  const tools = await pool.createTools({ workspace, owner: 'acme', budget });
  budget.hold();
  const waiting = byName(tools, 'echo').execute({ text: 'later', times: 1 }, new AbortController().signal);
  let done = false;
  void waiting.then(() => (done = true));
  await tick();
  t.false(done, 'not run while its budget holds it');
  // Meanwhile a caller with budget left is served (its own budget; the workers are free).
  const other = await byName(await pool.createTools({ workspace, owner: 'other' }), 'echo').execute({ text: 'now', times: 1 }, new AbortController().signal);
  t.is(other.llmContent, 'now');
  t.false(done);
  budget.open();
  t.is((await waiting).llmContent, 'later');

  budget.hold();
  const controller = new AbortController();
  const cancelled = byName(tools, 'burn').execute({ cpuMs: 10_000 }, controller.signal);
  await tick();
  controller.abort();
  const result = await cancelled;
  t.is(result.error?.type, 'cancelled');
  t.regex(result.llmContent as string, /share of the server's CPU/);
  t.is(budget.charges.length, 1, 'only the echo that ran was charged');
});

test('a call ended by its time limit sent no figure: its execution time is charged', async (t) => {
  const pool = createTestPool(t, { callTimeoutMs: 200, cancelGraceMs: 50 });
  const budget = new RecordingBudget();
  const spin = byName(await pool.createTools({ workspace, owner: 'acme', budget }), 'spin');
  const result = await spin.execute({}, new AbortController().signal);
  t.is(result.error?.type, 'execution_timeout');
  t.is(budget.charges.length, 1);
  t.true(budget.charges[0]! >= 200, `charged ${budget.charges[0]} ms for a call stopped after 200 ms`);
});

test('a budget that is not one is refused naming the option', async (t) => {
  const pool = createTestPool(t);
  await t.throwsAsync(pool.createTools({ workspace, budget: { admit: 1 } as never }), { message: /budget/ });
});
