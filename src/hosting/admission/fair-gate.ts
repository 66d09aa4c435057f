/**
 * A server-wide cap shared fairly: at most `capacity` holders at once; when
 * full, waiters queue per tenant and a freed slot goes to the next tenant
 * in turn (round-robin), not to the oldest waiter. One tenant queueing a
 * hundred calls thus delays another tenant's one call by at most one turn.
 */
export class FairGate {
  readonly capacity: number;
  #held = 0;
  /** Waiting tenants in turn order; a tenant is in it while it has waiters. */
  #turns: string[] = [];
  readonly #waiters = new Map<string, Array<(release: () => void) => void>>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('FairGate: capacity must be a positive integer');
    this.capacity = capacity;
  }

  /** Slots taken now. */
  get held(): number {
    return this.#held;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    let count = 0;
    for (const queue of this.#waiters.values()) count += queue.length;
    return count;
  }

  /**
   * Resolves with the function that frees the slot (call it once). Rejects
   * with the signal's reason when it aborts first.
   */
  acquire(tenant: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#held < this.capacity && this.#turns.length === 0) {
      this.#held++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = (release: () => void) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      };
      const onAbort = () => {
        this.#remove(tenant, waiter);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.#waiters.get(tenant);
      if (queue) queue.push(waiter);
      else {
        this.#waiters.set(tenant, [waiter]);
        this.#turns.push(tenant);
      }
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      this.#handOn();
    };
  }

  /** Gives free slots to the waiting tenants in turn. */
  #handOn(): void {
    while (this.#held < this.capacity && this.#turns.length > 0) {
      const tenant = this.#turns.shift()!;
      const queue = this.#waiters.get(tenant)!;
      const next = queue.shift()!;
      if (queue.length > 0) this.#turns.push(tenant);
      else this.#waiters.delete(tenant);
      this.#held++;
      next(this.#releaser());
    }
  }

  #remove(tenant: string, waiter: (release: () => void) => void): void {
    const queue = this.#waiters.get(tenant);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) {
      this.#waiters.delete(tenant);
      this.#turns = this.#turns.filter((name) => name !== tenant);
    }
  }
}
