import { Worker } from 'node:worker_threads';
import { MAX_COMMAND_BYTES } from '../contracts/defaults.js';
import { workerEntry } from '../paths.js';
import type { SimpleCommand } from './split-command.js';

/** A command for the parse thread. */
export interface SplitRequest {
  id: number;
  command: string;
}

export { MAX_COMMAND_BYTES };

export type SplitResponse = { id: number; commands: SimpleCommand[] } | { id: number; error: string };

/** How long one command's parse may take before it is given up as "cannot be judged". */
export const DEFAULT_SPLIT_BUDGET_MS = 2_000;

/** The UTF-8 length of a command, without encoding it when its length alone decides. */
export function commandBytes(command: string): number {
  return command.length > MAX_COMMAND_BYTES ? command.length : Buffer.byteLength(command, 'utf8');
}

function cannotJudge(reason: string): SimpleCommand[] {
  return [{ words: [], assignments: [], redirects: [], text: '(the whole command)', uncertain: reason }];
}

interface Job {
  id: number;
  command: string;
  resolve(commands: SimpleCommand[]): void;
}

/**
 * Splits shell commands in a worker thread, one at a time, each within a
 * time budget: a command over MAX_COMMAND_BYTES is not parsed at all, and
 * a parse that runs past the budget ends the thread (a fresh one takes the
 * next command); either way the command comes back as "cannot be judged",
 * never as judged. The main thread only posts the string and reads the
 * result, so its cost does not grow with what a tenant sends.
 */
export class SplitThread {
  readonly #budgetMs: number;
  readonly #queue: Job[] = [];
  #worker: Worker | undefined;
  #current: Job | undefined;
  #timer: NodeJS.Timeout | undefined;
  #nextId = 0;

  constructor(options: { budgetMs?: number } = {}) {
    const budget = options.budgetMs ?? DEFAULT_SPLIT_BUDGET_MS;
    if (!Number.isFinite(budget) || budget <= 0) throw new RangeError('SplitThread: options.budgetMs must be a positive number');
    this.#budgetMs = budget;
  }

  /** The simple commands of `command`, split off the main thread. */
  split(command: string): Promise<SimpleCommand[]> {
    const bytes = commandBytes(command);
    if (bytes > MAX_COMMAND_BYTES) return Promise.resolve(cannotJudge(`the command is longer than ${MAX_COMMAND_BYTES} bytes, the most a command can be`));
    return new Promise((resolve) => {
      this.#queue.push({ id: ++this.#nextId, command, resolve });
      this.#pump();
    });
  }

  /** Ends the thread; commands still queued come back as "cannot be judged". */
  async close(): Promise<void> {
    for (const job of this.#queue.splice(0)) job.resolve(cannotJudge('the policy engine was closed'));
    this.#finish(cannotJudge('the policy engine was closed'));
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #pump(): void {
    if (this.#current || this.#queue.length === 0) return;
    const job = this.#queue.shift()!;
    this.#current = job;
    const worker = this.#ensureWorker();
    worker.ref();
    worker.postMessage({ id: job.id, command: job.command } satisfies SplitRequest);
    this.#timer = setTimeout(() => this.#restart(`parsing it took longer than ${this.#budgetMs} ms`), this.#budgetMs);
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    // The heap cap keeps a pathological parse from growing the process; hitting it ends the thread like the budget.
    const worker = new Worker(workerEntry('policy-split'), { resourceLimits: { maxOldGenerationSizeMb: 256 } });
    worker.on('message', (response: SplitResponse) => {
      if (worker !== this.#worker || response.id !== this.#current?.id) return;
      this.#finish('error' in response ? cannotJudge(`it could not be parsed: ${response.error}`) : response.commands);
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

  #finish(commands: SimpleCommand[]): void {
    clearTimeout(this.#timer);
    const job = this.#current;
    this.#current = undefined;
    job?.resolve(commands);
  }

  #restart(reason: string): void {
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
    this.#finish(cannotJudge(reason));
    this.#pump();
  }
}

let shared: SplitThread | undefined;

/** The process's parse thread, started on first use (it does not keep the process alive while idle). */
export function sharedSplitThread(): SplitThread {
  shared ??= new SplitThread();
  return shared;
}
