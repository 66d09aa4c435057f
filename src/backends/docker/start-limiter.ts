import { ToolcellError, ToolErrorType } from '../../errors.js';

/**
 * At most `limit` container starts at once, the others waiting their turn
 * in order. A burst of starts all at once (a hundred sessions opened
 * together) makes the engine and the supervisors' first seconds share the
 * CPU evenly, so every start ends late, each near the start timeout; in
 * turn, the first sessions are ready early and the later ones follow.
 */
export class StartLimiter {
  readonly #limit: number;
  readonly #waiting: Array<() => void> = [];
  #running = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Runs `start` once a slot is free; `signal` aborts the wait (rejecting with `cancelled`), not a start under way. */
  async run<T>(start: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await start();
    } finally {
      this.#release();
    }
  }

  #acquire(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.#running < this.#limit) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(grant);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(cancelled());
      };
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.#running++;
        resolve();
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #release(): void {
    this.#running--;
    this.#waiting.shift()?.();
  }
}

function cancelled(): ToolcellError {
  return new ToolcellError(ToolErrorType.CANCELLED, 'The sandbox container start was cancelled.');
}
