/**
 * Admission to a fixed number of worker threads shared by owners (a hosting
 * server's tenants) that do not trust each other. A worker runs one call at a
 * time and a running call cannot be pre-empted, so fairness is decided at
 * the door:
 *
 * - an owner runs at most its fair share of the workers at once,
 *   ceil(workers / owners with calls running or waiting);
 * - the last free worker is kept for an owner with nothing running: one
 *   owner's slow calls never hold every worker, so another owner's call
 *   starts at once instead of waiting for them;
 * - a freed worker goes to a waiting owner with nothing running first, then
 *   to the others in turn (round-robin), whatever their queue lengths.
 *
 * With one worker there is nothing to keep back: calls take turns.
 */
export class FairShare {
  readonly capacity: number;
  #total = 0;
  readonly #running = new Map<string, number>();
  /** Waiting owners in turn order; an owner is in it while it has waiters. */
  #turns: string[] = [];
  readonly #waiters = new Map<string, Array<(release: () => void) => void>>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('FairShare: capacity must be a positive integer');
    this.capacity = capacity;
  }

  /** Calls admitted and not yet released. */
  get running(): number {
    return this.#total;
  }

  /** Calls waiting for a worker. */
  get waiting(): number {
    let count = 0;
    for (const queue of this.#waiters.values()) count += queue.length;
    return count;
  }

  /** Calls `owner` has running now. */
  runningFor(owner: string): number {
    return this.#running.get(owner) ?? 0;
  }

  /**
   * Resolves with the function that frees the worker (call it once, when
   * the call no longer holds one). Rejects with the signal's reason when it
   * aborts first.
   */
  acquire(owner: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (!this.#waiters.has(owner) && this.#mayStart(owner, this.#activeOwners(owner))) return Promise.resolve(this.#start(owner));
    return new Promise((resolve, reject) => {
      const waiter = (release: () => void) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      };
      const onAbort = () => {
        this.#remove(owner, waiter);
        reject(signal!.reason);
        // The owners it counted as active are one fewer: a share may have grown.
        this.#handOn();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.#waiters.get(owner);
      if (queue) queue.push(waiter);
      else {
        this.#waiters.set(owner, [waiter]);
        this.#turns.push(owner);
      }
    });
  }

  /** Owners with a call running or waiting, counting `extra` too. */
  #activeOwners(extra?: string): number {
    let count = this.#running.size;
    for (const owner of this.#waiters.keys()) if (!this.#running.has(owner)) count++;
    if (extra !== undefined && !this.#running.has(extra) && !this.#waiters.has(extra)) count++;
    return count;
  }

  #mayStart(owner: string, activeOwners: number): boolean {
    if (this.#total >= this.capacity) return false;
    const running = this.runningFor(owner);
    if (running === 0) return true;
    // The last free worker waits for an owner with nothing running.
    if (this.#total >= this.capacity - 1) return false;
    return running < Math.ceil(this.capacity / activeOwners);
  }

  #start(owner: string): () => void {
    this.#total++;
    this.#running.set(owner, this.runningFor(owner) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = this.runningFor(owner) - 1;
      if (left > 0) this.#running.set(owner, left);
      else this.#running.delete(owner);
      this.#handOn();
    };
  }

  /** Gives free workers to waiting owners: those with nothing running first, then in turn. */
  #handOn(): void {
    for (;;) {
      const active = this.#activeOwners();
      const next =
        this.#turns.find((owner) => this.runningFor(owner) === 0 && this.#mayStart(owner, active)) ??
        this.#turns.find((owner) => this.#mayStart(owner, active));
      if (next === undefined) return;
      const queue = this.#waiters.get(next)!;
      const waiter = queue.shift()!;
      this.#turns = this.#turns.filter((owner) => owner !== next);
      if (queue.length > 0) this.#turns.push(next);
      else this.#waiters.delete(next);
      waiter(this.#start(next));
    }
  }

  #remove(owner: string, waiter: (release: () => void) => void): void {
    const queue = this.#waiters.get(owner);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) {
      this.#waiters.delete(owner);
      this.#turns = this.#turns.filter((name) => name !== owner);
    }
  }
}
