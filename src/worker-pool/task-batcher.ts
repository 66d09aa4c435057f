import type { ToolTask, ToolTaskResult, WorkerMessage } from './worker-protocol.js';

/** Posts one message (a task or a group of tasks) to some worker; resolves with its reply. */
export type PostToWorker = (message: WorkerMessage) => Promise<ToolTaskResult | ToolTaskResult[]>;

interface Waiting {
  task: ToolTask;
  resolve: (result: ToolTaskResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the calls made in one tick and posts them in groups when there
 * are more of them than tasks the workers hold at once. Each message to a
 * worker costs the main thread a structured clone, a wake-up of the worker
 * and Piscina's bookkeeping (about a third of a no-op call's dispatch in
 * bench/dispatch); a group pays that once for all its calls.
 *
 * The price: a group's results come back together, when its last call ends,
 * and all of them are lost if its worker dies or is ended (a call that would
 * not stop). So only read-only calls are grouped (the pool runs a lost one
 * again), groups stay small (at most `maxGroup`), and calls are grouped only
 * when they would otherwise wait in the queue for a free worker anyway: a
 * slow call holds back at most a few others that were queued behind it.
 * Other calls, and calls that stream output (they have a port), are posted
 * alone, at once.
 */
export class TaskBatcher {
  readonly #post: PostToWorker;
  readonly #inFlightPerPost: number;
  readonly #maxGroup: number;
  #waiting: Waiting[] = [];
  #scheduled = false;

  constructor(options: { post: PostToWorker; workerSlots: number; maxGroup: number }) {
    this.#post = options.post;
    this.#inFlightPerPost = options.workerSlots;
    this.#maxGroup = options.maxGroup;
  }

  /** `groupable`: the call only reads, so running it twice is harmless. */
  run(task: ToolTask, options: { groupable: boolean }): Promise<ToolTaskResult> {
    if (task.port || !options.groupable) return this.#post({ task }) as Promise<ToolTaskResult>;
    return new Promise((resolve, reject) => {
      this.#waiting.push({ task, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        queueMicrotask(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const waiting = this.#waiting;
    this.#waiting = [];
    // No more than the workers take at once: each goes alone, as it always did.
    if (waiting.length <= this.#inFlightPerPost) {
      for (const one of waiting) this.#post({ task: one.task }).then(one.resolve as (value: unknown) => void, one.reject);
      return;
    }
    const size = Math.min(this.#maxGroup, Math.ceil(waiting.length / this.#inFlightPerPost));
    for (let start = 0; start < waiting.length; start += size) this.#postGroup(waiting.slice(start, start + size));
  }

  #postGroup(group: Waiting[]): void {
    if (group.length === 1) {
      const one = group[0]!;
      this.#post({ task: one.task }).then(one.resolve as (value: unknown) => void, one.reject);
      return;
    }
    this.#post({ group: group.map((one) => one.task) }).then(
      (results) => {
        const list = results as ToolTaskResult[];
        group.forEach((one, i) => one.resolve(list[i]!));
      },
      // The worker died or was ended: each call decides (by its slot) whether to post itself again.
      (error: unknown) => {
        for (const one of group) one.reject(error);
      },
    );
  }
}
