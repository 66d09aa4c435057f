/**
 * An AbortController made only when a tool reads its signal. Creating an
 * AbortSignal (an EventTarget) was the largest cost of a no-op call in the
 * worker (bench/dispatch profile), and most quick tools never look at it.
 */
export class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort(): void {
    this.#aborted = true;
    this.#controller?.abort();
  }
}
