/**
 * One 'abort' listener per signal, however many calls wait on it. A batch's
 * calls all share the scheduler's signal; an EventTarget listener added and
 * removed per call cost more than the rest of a no-op call's bookkeeping
 * on the main thread (bench/dispatch), and hundreds of them on one signal
 * trip Node's listener-leak warning.
 */
export class AbortFanout {
  readonly #waiting = new WeakMap<AbortSignal, Set<() => void>>();

  /**
   * Calls `onAbort` once when `signal` aborts (at once when it already has).
   * Returns the function that stops watching.
   */
  watch(signal: AbortSignal, onAbort: () => void): () => void {
    if (signal.aborted) {
      onAbort();
      return () => undefined;
    }
    let waiting = this.#waiting.get(signal);
    if (!waiting) {
      const set = new Set<() => void>();
      waiting = set;
      this.#waiting.set(signal, set);
      signal.addEventListener(
        'abort',
        () => {
          this.#waiting.delete(signal);
          for (const callback of set) callback();
          set.clear();
        },
        { once: true },
      );
    }
    waiting.add(onAbort);
    const set = waiting;
    return () => void set.delete(onAbort);
  }
}
