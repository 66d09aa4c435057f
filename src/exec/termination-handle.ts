/**
 * The signal Piscina watches to terminate a call's worker. A full
 * AbortController per call showed up in dispatch profiles, and Piscina only
 * needs `aborted`, `reason` and one abort listener, so this is that much.
 */
export class TerminationHandle {
  aborted = false;
  reason: unknown = undefined;
  #listener: (() => void) | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    this.#listener = listener;
  }

  removeEventListener(): void {
    this.#listener = undefined;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new Error('terminated');
    this.#listener?.();
  }
}
