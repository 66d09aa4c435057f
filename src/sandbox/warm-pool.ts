import { resolve } from 'node:path';
import type { SessionContainer } from './docker-session.js';

/** Workspaces that keep spares at once; the least recently used one loses its spares. */
const MAX_WARM_WORKSPACES = 4;

/**
 * Pre-started containers per workspace, so a new session skips container
 * creation (~250 ms) and only adopts a ready supervisor. A container is
 * handed to one session only and never returns to the pool. Only the
 * MAX_WARM_WORKSPACES most recently used workspaces keep spares, so a host
 * serving many tenants does not keep an idle container for each.
 */
export class WarmPool {
  readonly #size: number;
  readonly #start: (workspaceRoot: string) => Promise<SessionContainer>;
  readonly #spares = new Map<string, Array<Promise<SessionContainer>>>();
  #closed = false;

  constructor(input: { size: number; start: (workspaceRoot: string) => Promise<SessionContainer> }) {
    this.#size = input.size;
    this.#start = input.start;
  }

  /** Starts spares for `workspaceRoot` until `size` are ready or starting. */
  fill(workspaceRoot: string): void {
    if (this.#closed) return;
    const key = resolve(workspaceRoot);
    const spares = this.#spares.get(key) ?? [];
    this.#spares.delete(key);
    this.#spares.set(key, spares); // most recently used last
    for (const [stale, staleSpares] of this.#spares) {
      if (this.#spares.size <= MAX_WARM_WORKSPACES) break;
      this.#spares.delete(stale);
      void WarmPool.#discard(staleSpares);
    }
    while (spares.length < this.#size) {
      const spare = this.#start(key);
      spare.catch(() => undefined); // a failed spare is noticed (and replaced) by take()
      spares.push(spare);
    }
  }

  /** A ready container for `workspaceRoot`: a spare when one is alive, else a new one. Refills. */
  async take(workspaceRoot: string): Promise<SessionContainer> {
    if (this.#closed) throw new Error('the warm pool is closed');
    const key = resolve(workspaceRoot);
    const spares = this.#spares.get(key) ?? [];
    // Only the spares present now are tried: refilling while draining the same list would loop
    // forever when every start fails (e.g. a workspace the sandbox refuses to mount).
    for (let tries = spares.length; tries > 0 && spares.length > 0; tries--) {
      const spare = spares.shift()!;
      try {
        const candidate = await spare;
        if (candidate.container.alive) {
          this.fill(key);
          return candidate;
        }
        void candidate.container.remove().catch(() => undefined);
      } catch {
        // The spare failed to start: start one now, which reports the error.
      }
    }
    const fresh = this.#start(key);
    // Refill only once a start succeeds, so a workspace that cannot be mounted costs one attempt.
    fresh.then(
      () => this.fill(key),
      () => undefined,
    );
    return fresh;
  }

  /** Removes every spare, also those still starting. */
  async close(): Promise<void> {
    this.#closed = true;
    const spares = [...this.#spares.values()].flat();
    this.#spares.clear();
    await WarmPool.#discard(spares);
  }

  static async #discard(spares: Array<Promise<SessionContainer>>): Promise<void> {
    await Promise.all(
      spares.map(async (spare) => {
        try {
          await (await spare).container.remove();
        } catch {
          // failed to start: nothing to remove
        }
      }),
    );
  }
}
