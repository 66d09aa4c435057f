import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { CHOSEN_WORK_THREAD_NICE, MAX_COMMAND_BYTES } from '../contracts/defaults.js';
import { z } from 'zod';
import { parseOptions } from '../contracts/parse-options.js';
import type { WorkBudget } from '../contracts/work-budget.js';
import { workerEntry } from '../paths.js';
import { judgeLayer, type LayerRequest, type PolicyVerdict } from './policy-verdict.js';
import type { SimpleCommand } from './split-command.js';

export { MAX_COMMAND_BYTES };

/** Work for the parse thread: judge a shell command by layers of rules, or find its "allow always" prefixes. */
export type ThreadRequest = { id: number; kind: 'judge'; command: string; layers: LayerRequest[] } | { id: number; kind: 'prefixes'; command: string };

export type ThreadResponse = ({ id: number; verdicts: PolicyVerdict[] } | { id: number; prefixes: string[] | undefined } | { id: number; error: string }) & {
  /** The thread's CPU time for this request, in ms (what the caller's WorkBudget is charged). */
  cpuMs?: number;
};

/** How long one command's parse may take before it is given up as "cannot be judged". */
export const DEFAULT_SPLIT_BUDGET_MS = 5_000;

/** The UTF-8 length of a command, without encoding it when its length alone decides. */
export function commandBytes(command: string): number {
  return command.length > MAX_COMMAND_BYTES ? command.length : Buffer.byteLength(command, 'utf8');
}

/** A command the engine could not parse, as one simple command that cannot be judged. */
export function cannotJudge(reason: string): SimpleCommand[] {
  return [{ words: [], assignments: [], redirects: [], text: '(the whole command)', uncertain: reason }];
}

type Request = { kind: 'judge'; command: string; layers: LayerRequest[] } | { kind: 'prefixes'; command: string };

/** Who a command's parse is for: its CPU time is charged to `budget`, which it first waits for (abandoned when `signal` aborts). */
export interface JudgeOptions {
  budget?: WorkBudget;
  signal?: AbortSignal;
}

interface Job {
  id: number;
  request: Request;
  budget?: WorkBudget | undefined;
  /** When the thread was given it (performance.now()). */
  startedAt?: number;
  resolve(response: ThreadResponse | { failed: string }): void;
}

/**
 * Judges shell commands in a worker thread, one at a time, each within a
 * time budget: the thread parses the command and matches every simple
 * command against the rules, and answers only the verdicts (a few hundred
 * bytes, whatever the command). A parse that runs past the budget, or a
 * thread that fails, ends the thread (a fresh one takes the next command)
 * and the command comes back as "cannot be judged", never as judged. The
 * main thread only posts the string and reads the verdicts, so its cost
 * does not grow with what a tenant sends.
 */
const splitThreadOptionsSchema = z.strictObject({
  /** How long one command may take to judge before its thread is ended. */
  budgetMs: z.number().gt(0).max(Number.MAX_SAFE_INTEGER).default(DEFAULT_SPLIT_BUDGET_MS),
  /** The thread's own OS priority (Linux), 0-19; only for the long-command thread. */
  nice: z.number().int().min(0).max(19).default(0),
});

export class SplitThread {
  readonly #budgetMs: number;
  readonly #nice: number;
  readonly #queue: Job[] = [];
  #worker: Worker | undefined;
  #current: Job | undefined;
  #timer: NodeJS.Timeout | undefined;
  #nextId = 0;

  constructor(options: z.input<typeof splitThreadOptionsSchema> = {}) {
    const parsed = parseOptions(splitThreadOptionsSchema, options, 'SplitThread');
    this.#budgetMs = parsed.budgetMs;
    this.#nice = parsed.nice;
  }

  /** True while a command is being judged or waits for its turn. */
  get busy(): boolean {
    return this.#current !== undefined || this.#queue.length > 0;
  }

  /** Each layer's verdict on `command`. */
  async judge(command: string, layers: LayerRequest[], options: JudgeOptions = {}): Promise<PolicyVerdict[]> {
    const bytes = commandBytes(command);
    const fallback = (reason: string) => layers.map((layer) => judgeLayer(layer, cannotJudge(reason)));
    if (bytes > MAX_COMMAND_BYTES) return fallback(`the command is longer than ${MAX_COMMAND_BYTES} bytes, the most a command can be`);
    try {
      // A caller past its share of the server's CPU waits before the thread takes its command, not after.
      await options.budget?.admit(options.signal);
    } catch {
      return fallback('the call was cancelled while it waited for its share of the server to judge it');
    }
    const response = await this.#run({ kind: 'judge', command, layers }, options.budget);
    if ('failed' in response) return fallback(response.failed);
    if ('error' in response) return fallback(`it could not be parsed: ${response.error}`);
    return 'verdicts' in response ? response.verdicts : fallback('the parse thread answered something else');
  }

  /** The prefixes "allow always" would save for `command` (see alwaysAllowPrefixes), or undefined. */
  async prefixes(command: string): Promise<string[] | undefined> {
    if (commandBytes(command) > MAX_COMMAND_BYTES) return undefined;
    const response = await this.#run({ kind: 'prefixes', command });
    return 'prefixes' in response ? response.prefixes : undefined;
  }

  /** Ends the thread; commands still queued come back as "cannot be judged". */
  async close(): Promise<void> {
    for (const job of this.#queue.splice(0)) job.resolve({ failed: 'the policy engine was closed' });
    this.#finish({ failed: 'the policy engine was closed' });
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #run(request: Request, budget?: WorkBudget): Promise<ThreadResponse | { failed: string }> {
    return new Promise((resolve) => {
      this.#queue.push({ id: ++this.#nextId, request, budget, resolve });
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#current || this.#queue.length === 0) return;
    const job = this.#queue.shift()!;
    this.#current = job;
    job.startedAt = performance.now();
    const worker = this.#ensureWorker();
    worker.ref();
    worker.postMessage({ id: job.id, ...job.request } satisfies ThreadRequest);
    this.#timer = setTimeout(() => this.#restart(`judging it took longer than ${this.#budgetMs} ms`), this.#budgetMs);
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    // The heap cap keeps a pathological parse from growing the process; hitting it ends the thread like the budget.
    const worker = new Worker(workerEntry('policy-split.js'), { resourceLimits: { maxOldGenerationSizeMb: 256 }, workerData: { nice: this.#nice } });
    worker.on('message', (response: ThreadResponse) => {
      if (worker !== this.#worker || response.id !== this.#current?.id) return;
      this.#finish(response);
      worker.unref();
      this.#pump();
    });
    worker.on('error', (error) => {
      if (worker === this.#worker) this.#restart(`the parse thread failed: ${error.message}`);
    });
    worker.on('exit', () => {
      if (worker === this.#worker) this.#restart('the parse thread ended');
    });
    this.#worker = worker;
    return worker;
  }

  #finish(response: ThreadResponse | { failed: string }): void {
    clearTimeout(this.#timer);
    const job = this.#current;
    this.#current = undefined;
    if (job?.budget && job.startedAt !== undefined) {
      // A thread ended past its budget sent no figure: the time it was given is charged instead.
      const cpuMs = 'cpuMs' in response && typeof response.cpuMs === 'number' ? response.cpuMs : performance.now() - job.startedAt;
      job.budget.charge(cpuMs);
    }
    job?.resolve(response);
  }

  #restart(reason: string): void {
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
    this.#finish({ failed: reason });
    this.#pump();
  }
}

/** Commands up to this many characters go to their own thread: an ordinary command never waits behind a 128 KiB one. */
export const SMALL_COMMAND_CHARS = 4_096;

/**
 * The policy engine's parse threads: one for ordinary commands and one for
 * long ones, so that one tenant's stream of long commands delays only long
 * commands, never another tenant's `ls`.
 */
export class CommandSplitter {
  readonly #small: SplitThread;
  readonly #large: SplitThread;

  constructor(options: { budgetMs?: number } = {}) {
    this.#small = new SplitThread(options);
    // Lower than the process: only long commands wait for it, and it must not starve the event loop or the shell thread.
    this.#large = new SplitThread({ ...options, nice: CHOSEN_WORK_THREAD_NICE });
  }

  #thread(command: string): SplitThread {
    return command.length <= SMALL_COMMAND_CHARS ? this.#small : this.#large;
  }

  judge(command: string, layers: LayerRequest[], options: JudgeOptions = {}): Promise<PolicyVerdict[]> {
    return this.#thread(command).judge(command, layers, options);
  }

  prefixes(command: string): Promise<string[] | undefined> {
    return this.#thread(command).prefixes(command);
  }

  /** True while any command is being judged or waits for its turn. */
  get busy(): boolean {
    return this.#small.busy || this.#large.busy;
  }

  async close(): Promise<void> {
    await Promise.all([this.#small.close(), this.#large.close()]);
  }
}

let shared: CommandSplitter | undefined;

/** The process's parse threads, started on first use (they do not keep the process alive while idle). */
export function sharedCommandSplitter(): CommandSplitter {
  shared ??= new CommandSplitter();
  return shared;
}
