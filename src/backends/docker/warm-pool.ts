import { setMaxListeners } from 'node:events';
import { resolve } from 'node:path';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { untilAborted } from '../../until-aborted.js';
import type { SessionContainer } from './docker-session.js';
import { limitsKey, type SessionLimits } from '../session-limits.js';

/** Workspace-and-limits pairs that keep spares at once; the least recently used one loses its spares. */
const MAX_WARM_WORKSPACES = 4;

/**
 * The limits a session's container gets, filled in (a CPU group, a user and a
 * runtime only when named; else the workspace owner and the engine's default
 * runtime).
 */
export type EffectiveSessionLimits = Required<Pick<SessionLimits, 'memory' | 'cpus' | 'pids'>> &
  Pick<SessionLimits, 'cpuGroup' | 'cpuGroupCpus' | 'user' | 'runtime'>;

/** Starts a container for a workspace with these limits; `signal` cancels the start (the half-started container is removed). */
export type StartContainer = (workspaceRoot: string, limits: EffectiveSessionLimits, signal: AbortSignal) => Promise<SessionContainer>;

/**
 * Pre-started containers per workspace and container limits, so a new
 * session skips container creation (~250 ms) and only adopts a ready
 * supervisor. A spare is only handed to a session of the same workspace AND
 * the same memory/CPU/pids limits: a container's limits are fixed when it is
 * created. A container is handed to one session only and never returns to
 * the pool. Only the MAX_WARM_WORKSPACES most recently used pairs keep
 * spares, so a host serving many tenants does not keep an idle container for
 * each.
 */
export class WarmPool {
  readonly #size: number;
  readonly #start: StartContainer;
  readonly #spares = new Map<string, Array<Promise<SessionContainer>>>();
  /** Aborted by close(): spares still starting stop and remove themselves. */
  readonly #closing = new AbortController();

  constructor(input: { size: number; start: StartContainer }) {
    this.#size = input.size;
    this.#start = input.start;
    // Every start in flight follows this signal (AbortSignal.any in take): a burst of sessions is not a leak.
    setMaxListeners(0, this.#closing.signal);
  }

  /** Starts spares for `workspaceRoot` with `limits` until `size` are ready or starting. */
  fill(workspaceRoot: string, limits: EffectiveSessionLimits): void {
    if (this.#closing.signal.aborted) return;
    const root = resolve(workspaceRoot);
    const key = poolKey(root, limits);
    const spares = this.#spares.get(key) ?? [];
    this.#spares.delete(key);
    this.#spares.set(key, spares); // most recently used last
    for (const [stale, staleSpares] of this.#spares) {
      if (this.#spares.size <= MAX_WARM_WORKSPACES) break;
      this.#spares.delete(stale);
      void WarmPool.#discard(staleSpares);
    }
    while (spares.length < this.#size) {
      const spare = this.#start(root, limits, this.#closing.signal);
      spare.catch(() => undefined); // a failed spare is noticed (and replaced) by take()
      spares.push(spare);
    }
  }

  /**
   * A ready container for `workspaceRoot` with `limits`: a spare of that
   * pair when one is alive, else a new one. Refills. Aborting `signal` stops the wait with a `cancelled`
   * error: a spare still starting stays in the pool, a container started for
   * this call is removed.
   */
  async take(workspaceRoot: string, limits: EffectiveSessionLimits, signal?: AbortSignal): Promise<SessionContainer> {
    if (this.#closing.signal.aborted) throw new Error('the warm pool is closed');
    if (signal?.aborted) throw cancelledTake();
    const root = resolve(workspaceRoot);
    const key = poolKey(root, limits);
    const spares = this.#spares.get(key) ?? [];
    // Only the spares present now are tried: refilling while draining the same list would loop
    // forever when every start fails (e.g. a workspace the sandbox refuses to mount).
    for (let tries = spares.length; tries > 0 && spares.length > 0; tries--) {
      const spare = spares.shift()!;
      let candidate: SessionContainer | undefined;
      try {
        candidate = await untilAborted(spare, signal);
      } catch {
        continue; // The spare failed to start: try the next, or start one now, which reports the error.
      }
      if (candidate === undefined) {
        spares.unshift(spare); // still the pool's: a later take, or close(), gets it
        throw cancelledTake();
      }
      if (candidate.container.alive) {
        this.fill(root, limits);
        return candidate;
      }
      void candidate.container.remove().catch(() => undefined);
    }
    const fresh = this.#start(root, limits, signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal);
    // Refill only once a start succeeds, so a workspace that cannot be mounted costs one attempt.
    fresh.then(
      () => {
        if (!signal?.aborted) this.fill(root, limits);
      },
      () => undefined,
    );
    return fresh;
  }

  /** Removes every spare, also those still starting (their starts are cancelled). */
  async close(): Promise<void> {
    this.#closing.abort();
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
          // failed to start, or the start was cancelled: nothing to remove
        }
      }),
    );
  }
}

function poolKey(root: string, limits: EffectiveSessionLimits): string {
  return `${root}\0${limitsKey(limits)}`;
}

function cancelledTake(): ToolcellError {
  return new ToolcellError(ToolErrorType.CANCELLED, 'The sandbox container start was cancelled.');
}
