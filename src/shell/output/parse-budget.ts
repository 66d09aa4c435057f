/**
 * Measures how long xterm spends parsing one renderer's output, so that a
 * command whose escape sequences are cheap to send but costly to emulate
 * (a full reset, a screen-sized repeat, a scroll of the whole screen, each a
 * few bytes) cannot keep the shell thread busy for minutes.
 *
 * xterm parses queued chunks in batches, one macrotask per batch, and never
 * splits a chunk. The renderer writes an empty marker chunk before each slice:
 * the marker's callback runs right before the slice is parsed and the slice's
 * callback right after it, so the time between the two is the parse. A batch
 * can end between them (xterm yields after 12 ms); the slice then opens the
 * next batch at a time nobody observes. A microtask queued by the marker runs
 * when its batch ends and forgets the start, so such a slice is left out
 * rather than counted with the wait.
 */
/** Default render budget: tens of times what 8 MB of plain text or bare newlines cost. */
export const DEFAULT_RENDER_BUDGET_MS = 10_000;

export class ParseBudget {
  readonly #budgetMs: number;
  #spentMs = 0;
  #startedAt = -1;

  constructor(budgetMs: number) {
    this.#budgetMs = budgetMs;
  }

  get exhausted(): boolean {
    return this.#spentMs > this.#budgetMs;
  }

  /** The marker before a slice was parsed: the slice is next. */
  markStart(): void {
    this.#startedAt = performance.now();
    queueMicrotask(() => {
      this.#startedAt = -1;
    });
  }

  /** The slice was parsed. */
  markEnd(): void {
    if (this.#startedAt >= 0) this.#spentMs += performance.now() - this.#startedAt;
    this.#startedAt = -1;
  }
}
