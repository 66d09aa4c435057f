import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { z } from 'zod';
import { integerOption, parseOptions } from '../contracts/parse-options.js';
import { Piscina } from 'piscina';
import { ToolcellError, ToolErrorType, type ErrorCode } from '../errors.js';
import { workerEntry } from '../paths.js';
import { workspaceInfoOption } from '../contracts/workspace-info.js';
import type { WorkBudget } from '../contracts/work-budget.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import { DefinedTool, type CallerOptions, type RunOptions, type ToolRunner } from '../tools/defined-tool.js';
import { toolErrorResult } from '../tools/results.js';
import type { Tool, ToolConfirmationDetails, ToolKind, ToolResult, ToolResultError, UpdateOutput } from '../tools/tool.js';
import { builtinToolModuleUrl } from './builtin-module.js';
import { AbortFanout } from './abort-fanout.js';
import { CancelBoard } from './cancel-board.js';
import { FairShare } from './fair-share.js';
import { TaskBatcher } from './task-batcher.js';
import { loadToolModule } from './tool-module.js';
import type { PortMessage, ToolTask, ToolTaskResult, ToolWorkerData, WorkerMessage } from './worker-protocol.js';

/**
 * The options of `new WorkerPool`, their bounds and their defaults in one
 * place; `WorkerPoolOptions` (what callers pass) is derived from it.
 */
const workerPoolOptionsSchema = z.object({
  /** Threads kept running. Default: the number of CPUs. */
  threads: z
    .number()
    .int()
    .min(1)
    .default(() => availableParallelism()),
  /** V8 old-generation heap limit per worker, in MB. A tool that exceeds it gets `worker_out_of_memory`. Default 512. */
  maxHeapMb: integerOption(1, 512),
  /**
   * Per-call time limit in ms of execution (queueing excluded), checked every quarter of it (at most every second); the call then ends
   * with `execution_timeout`. Default 120,000. Tools made by `createTools` with their own `callTimeoutMs` use theirs.
   */
  callTimeoutMs: integerOption(1, 120_000),
  /** How long a cancelled call may take to stop by itself before its worker is terminated. Default 1,000 ms. */
  cancelGraceMs: integerOption(1, 1_000),
  /**
   * The threads' OS priority (nice, 0-19; Linux): above 0, file-tool work (a regular expression over
   * a large file) waits for the threads every call goes through (the event loop, the shell thread).
   * Default 0, the process's own. (bench/hosting's BENCH_TOOL_THREAD_NICE compares; on the shared
   * 2-core machine four paired runs at 10 and 0 could not tell them apart.)
   */
  threadNice: integerOption(0, 0, 19),
  /** Calls that may be queued or running at once; more are refused. Default 16,384. */
  maxCallsInFlight: integerOption(1, 16_384),
  /** Extra tool modules (URLs of modules exporting `tools`) the workers may run, besides the built-ins. */
  toolModules: z
    .array(z.union([z.string(), z.instanceof(URL)]))
    .readonly()
    .default([]),
});

export type WorkerPoolOptions = z.input<typeof workerPoolOptionsSchema>;

const createToolsOptionsSchema = z.strictObject({
  workspace: workspaceInfoOption,
  /** A hosting server's tenant: its calls get that owner's fair share of the workers. */
  owner: z.string().min(1).optional(),
  /** This time limit instead of the pool's. */
  callTimeoutMs: z.number().int().min(1).optional(),
  /** What the calls' CPU time in the workers is charged to, and waits for before each call starts (a hosting tenant's share). */
  budget: z
    .custom<WorkBudget>((value) => typeof (value as WorkBudget | undefined)?.admit === 'function' && typeof (value as WorkBudget).charge === 'function', {
      error: 'must be a WorkBudget (admit and charge)',
    })
    .optional(),
});

/**
 * Tasks posted to a worker at once. The worker runs them one at a time
 * (workers/tools.ts); the second waits there, so the worker starts it as soon
 * as the first ends instead of waiting for the main thread to post it: that
 * round trip halved throughput (bench/dispatch).
 */
const TASKS_PER_WORKER = 2;
/** Most calls posted to a worker in one message (see TaskBatcher). */
const MAX_GROUP = 16;
/** Kinds of tool whose calls may be posted in groups: running one twice is harmless (see TaskBatcher). */
const GROUPABLE_KINDS: ReadonlySet<ToolKind> = new Set(['read', 'search']);
/** Times a call that never started is posted again after its worker was ended for another call. */
const REPOSTS = 3;

/** One task for a worker: what to run, with the call's options. */
type PoolTask = RunOptions & { op: ToolTask['op']; definition: AnyToolDefinition; params: unknown; updateOutput?: UpdateOutput };

/** What a task comes back as: a result, confirmation details, or a tool error. */
type PoolOutcome =
  { kind: 'result'; result: ToolResult } | { kind: 'details'; details: ToolConfirmationDetails | false } | { kind: 'error'; error: ToolResultError };

/**
 * Runs trusted tool definitions in Piscina worker threads. Abort is
 * cooperative first (a cancel on the shared cancel board aborts the tool's
 * signal in the worker); a call that does not stop within `cancelGraceMs`, loops forever or
 * blocks its thread is ended by terminating its worker, which Piscina
 * replaces, so the next call works. A worker runs one call at a time, so
 * that ends no other running call; a call posted to it that had not started
 * yet is posted again, and so is a read-only call of a group (TaskBatcher)
 * that had ended but whose result was lost with the worker.
 *
 * Calls with an owner (a hosting server's tenant, see `createTools`) are
 * admitted by FairShare: one at a time per worker, each owner at most its
 * share, the last free worker kept for an owner with nothing running, so
 * one tenant's slow calls never make another's wait behind them.
 */
export class WorkerPool implements ToolRunner {
  readonly #piscina: Piscina<WorkerMessage, ToolTaskResult | ToolTaskResult[]>;
  readonly #batcher: TaskBatcher;
  readonly #toolModules: string[];
  readonly #callTimeoutMs: number;
  readonly #cancelGraceMs: number;
  readonly #maxCallsInFlight: number;
  readonly #board: CancelBoard;
  readonly #aborts = new AbortFanout();
  /** Calls in flight, checked against their time limit by one sweeper timer rather than a timer per call. */
  readonly #timeLimits = new Set<{ slot: number; timeoutMs: number; expire: () => void }>();
  /** Admission of calls with an owner: one per worker, shared fairly (see the class comment). */
  readonly #fair: FairShare;
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(options: WorkerPoolOptions = {}) {
    const { threads, maxHeapMb, callTimeoutMs, cancelGraceMs, maxCallsInFlight, toolModules, threadNice } = parseOptions(
      workerPoolOptionsSchema,
      options,
      'WorkerPool',
    );
    this.#callTimeoutMs = callTimeoutMs;
    this.#cancelGraceMs = cancelGraceMs;
    this.#maxCallsInFlight = maxCallsInFlight;
    this.#board = new CancelBoard({ slots: this.#maxCallsInFlight });
    this.#fair = new FairShare(threads);
    this.#toolModules = [builtinToolModuleUrl, ...toolModules.map(String)];
    this.#piscina = new Piscina<WorkerMessage, ToolTaskResult | ToolTaskResult[]>({
      // CommonJS, which loads workers/tools.ts with import(): Piscina require()s its file (see tools-entry.cts).
      filename: workerEntry('tools-entry.cjs').href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: TASKS_PER_WORKER,
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
      workerData: { toolModules: this.#toolModules, board: this.#board.memory, nice: threadNice } satisfies ToolWorkerData,
    });
    this.#batcher = new TaskBatcher({
      post: (message) => this.#piscina.run(message, message.task?.port ? { transferList: [message.task.port] } : undefined),
      workerSlots: threads * TASKS_PER_WORKER,
      maxGroup: MAX_GROUP,
    });
    // The time limit counts execution, not time spent queued behind other calls.
    this.#sweeper = setInterval(
      () => {
        for (const limit of this.#timeLimits) {
          const elapsed = this.#board.executingFor(limit.slot);
          if (elapsed !== undefined && elapsed >= limit.timeoutMs) {
            this.#timeLimits.delete(limit);
            limit.expire();
          }
        }
      },
      Math.max(10, Math.min(1_000, Math.floor(this.#callTimeoutMs / 4))),
    );
    this.#sweeper.unref();
    // A worker that dies (heap limit, crash) fails its task; Piscina replaces it. Nothing to do here.
    this.#piscina.on('error', () => {});
  }

  /**
   * Tools for every definition of the built-ins and the extra tool modules,
   * executing in this pool and confined to `workspace`. With an `owner` (a
   * hosting server's tenant), their calls get that owner's fair share of the
   * workers; with `callTimeoutMs`, that time limit instead of the pool's.
   */
  async createTools(raw: z.input<typeof createToolsOptionsSchema>): Promise<Tool<unknown>[]> {
    const options = parseOptions(createToolsOptionsSchema, raw, 'WorkerPool.createTools');
    const caller: CallerOptions = {
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
      ...(options.callTimeoutMs !== undefined ? { timeoutMs: options.callTimeoutMs } : {}),
      ...(options.budget !== undefined ? { budget: options.budget } : {}),
    };
    const tools: Tool<unknown>[] = [];
    for (const [index, url] of this.#toolModules.entries()) {
      for (const definition of await loadToolModule(url)) {
        tools.push(
          new DefinedTool({ definition, runner: this, workspace: options.workspace, source: index === 0 ? { type: 'builtin' } : { type: 'local' }, caller }),
        );
      }
    }
    return tools;
  }

  async confirm(definition: AnyToolDefinition, params: unknown, options: RunOptions): Promise<ToolConfirmationDetails | false> {
    const outcome = await this.#run({ op: 'confirm', definition, params, ...options });
    if (outcome.kind === 'error') throw new ToolcellError(outcome.error.type, outcome.error.message);
    return outcome.kind === 'details' ? outcome.details : false;
  }

  async execute(definition: AnyToolDefinition, params: unknown, options: RunOptions & { updateOutput?: UpdateOutput }): Promise<ToolResult> {
    const outcome = await this.#run({ op: 'execute', definition, params, ...options });
    if (outcome.kind === 'error') return toolErrorResult(outcome.error.type, outcome.error.message);
    return outcome.kind === 'result' ? outcome.result : toolErrorResult(ToolErrorType.EXECUTION_FAILED, 'worker returned no result');
  }

  async #run(input: PoolTask): Promise<PoolOutcome> {
    if (this.#closed) throw new Error('WorkerPool is closed');
    const name = input.definition.name;
    const fail = (type: ErrorCode, message: string) => ({ kind: 'error' as const, error: { type, message } });
    try {
      // A caller past its share of the threads' CPU waits here, before it takes a worker from anyone.
      await input.budget?.admit(input.signal);
    } catch {
      return fail(ToolErrorType.CANCELLED, `Tool "${name}" was cancelled while it waited for its share of the server's CPU.`);
    }
    if (input.owner === undefined) return this.#admitted(input);
    let release: () => void;
    try {
      release = await this.#fair.acquire(input.owner, input.signal);
    } catch {
      return fail(ToolErrorType.CANCELLED, `Tool "${name}" was cancelled while it waited for a worker.`);
    }
    try {
      return await this.#admitted(input);
    } finally {
      release();
    }
  }

  async #admitted(input: PoolTask): Promise<PoolOutcome> {
    const name = input.definition.name;
    const timeoutMs = input.timeoutMs ?? this.#callTimeoutMs;
    const fail = (type: ErrorCode, message: string) => ({ kind: 'error' as const, error: { type, message } });
    const slot = this.#board.acquire();
    if (slot === undefined) return fail(ToolErrorType.EXECUTION_FAILED, `Too many tool calls in flight (${this.#maxCallsInFlight}); "${name}" was not run.`);
    // Only tools that stream output pay for a MessagePort (its transfer costs as much as the whole dispatch).
    const channel = input.updateOutput ? new MessageChannel() : undefined;
    let outputEnded: Promise<void> = Promise.resolve();
    if (channel && input.updateOutput) {
      const updateOutput = input.updateOutput;
      outputEnded = new Promise((resolve) => {
        channel.port1.on('message', (message: PortMessage) => {
          if (message.type === 'end') resolve();
          else updateOutput(message.output);
        });
        channel.port1.on('close', resolve);
      });
    }
    let terminated = false;
    let timedOut = false;
    let graceTimer: NodeJS.Timeout | undefined;
    // Settles the wait when a call that no worker has started yet is given up (its worker is busy with another).
    let giveUp: () => void = () => undefined;
    const terminate = () => {
      terminated = true;
      const threadId = this.#board.runningOn(slot);
      if (threadId === 0) giveUp();
      else for (const worker of this.#piscina.threads) if (worker.threadId === threadId) void worker.terminate();
    };
    const requestCancel = () => {
      if (graceTimer) return;
      this.#board.cancel(slot);
      graceTimer = setTimeout(terminate, this.#cancelGraceMs);
    };
    const timeLimit = {
      slot,
      timeoutMs,
      expire: () => {
        timedOut = true;
        requestCancel();
      },
    };
    this.#timeLimits.add(timeLimit);
    const unwatch = this.#aborts.watch(input.signal, requestCancel);

    const task: ToolTask = { op: input.op, toolName: name, params: input.params, workspace: input.workspace, slot };
    const groupable = GROUPABLE_KINDS.has(input.definition.kind);
    if (channel) task.port = channel.port2;
    // Set once no worker holds the task any more; until then its slot stays taken.
    let settled: Promise<unknown> | undefined;
    let charged = false;
    try {
      let reply: ToolTaskResult | undefined;
      for (let posts = 0; ; posts++) {
        const running = this.#batcher.run(task, { groupable });
        settled = undefined;
        try {
          reply = await new Promise<ToolTaskResult | undefined>((resolve, reject) => {
            giveUp = () => {
              // A call given up may still be queued in its worker.
              settled = running.catch(() => undefined);
              resolve(undefined);
            };
            running.then(resolve, reject);
          });
          break;
        } catch (error) {
          // Its worker was ended for another call (or died) before this one started, or (a read-only
          // call of a group) after it ended but before the group's results came back: post it again.
          if (
            !terminated &&
            !this.#closed &&
            posts < REPOSTS &&
            !channel &&
            (this.#board.neverStarted(slot) || (groupable && this.#board.requeueFinished(slot)))
          )
            continue;
          throw error;
        }
      }
      if (reply === undefined) return fail(ToolErrorType.CANCELLED, `Tool "${name}" was cancelled before it started.`);
      charged = true;
      input.budget?.charge(reply.cpuMs ?? 0);
      // Deliver every live update before the result (bounded: a worker that died sends no `end`).
      if (channel) await Promise.race([outputEnded, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      if (timedOut) return fail(ToolErrorType.EXECUTION_TIMEOUT, `Tool "${name}" exceeded its time limit of ${timeoutMs} ms and was stopped.`);
      if (!reply.ok) return fail(reply.code, reply.message);
      return reply.op === 'confirm' ? { kind: 'details', details: reply.details } : { kind: 'result', result: reply.result };
    } catch (error) {
      if (timedOut) return fail(ToolErrorType.EXECUTION_TIMEOUT, `Tool "${name}" exceeded its time limit of ${timeoutMs} ms; its worker was terminated.`);
      if (terminated)
        return fail(ToolErrorType.CANCELLED, `Tool "${name}" did not stop within ${this.#cancelGraceMs} ms of being cancelled; its worker was terminated.`);
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY')
        return fail(ToolErrorType.WORKER_OUT_OF_MEMORY, `Tool "${name}" ran out of memory (worker heap limit reached); its worker was replaced.`);
      return fail(ToolErrorType.WORKER_CRASHED, `Tool "${name}" crashed its worker: ${(error as Error)?.message ?? String(error)}`);
    } finally {
      // A call whose worker was ended (time limit, cancel, crash) sent no figure: its execution's wall time is charged instead.
      if (!charged) input.budget?.charge(this.#board.executingFor(slot) ?? 0);
      this.#timeLimits.delete(timeLimit);
      clearTimeout(graceTimer);
      unwatch();
      channel?.port1.close();
      // A reply or a failure means no worker holds the task: its slot is free at once.
      if (settled) void settled.then(() => this.#board.release(slot));
      else this.#board.release(slot);
    }
  }

  /** Stops every worker. Running calls fail. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#sweeper);
    await this.#piscina.destroy();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
