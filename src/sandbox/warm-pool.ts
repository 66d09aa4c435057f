import { resolve } from 'node:path';
import type { SessionContainer } from './docker-session.js';

/**
 * Pre-started containers per workspace, so a new session skips container
 * creation (~250 ms) and only adopts a ready supervisor. A container is
 * handed to one session only and never returns to the pool.
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
    this.#spares.set(key, spares);
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
    while (spares.length > 0) {
      const spare = spares.shift()!;
      this.fill(key);
      try {
        const candidate = await spare;
        if (candidate.container.alive) return candidate;
        void candidate.container.remove().catch(() => undefined);
      } catch {
        // The spare failed to start: start one now, which reports the error.
      }
    }
    const fresh = this.#start(key);
    this.fill(key);
    return fresh;
  }

  /** Removes every spare, also those still starting. */
  async close(): Promise<void> {
    this.#closed = true;
    const spares = [...this.#spares.values()].flat();
    this.#spares.clear();
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
