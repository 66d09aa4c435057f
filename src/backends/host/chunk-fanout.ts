type Stream = 'stdout' | 'stderr';
type Listener = (chunk: Uint8Array, stream: Stream) => void;

/**
 * Delivers a process's output chunks to `onData` listeners, holding the
 * chunks that arrive before the first listener is attached (a spawn
 * resolves before its caller can subscribe).
 */
export class ChunkFanout {
  readonly #listeners: Listener[] = [];
  #early: Array<[Uint8Array, Stream]> | undefined = [];

  add(listener: Listener): void {
    this.#listeners.push(listener);
    const early = this.#early;
    this.#early = undefined;
    if (early) for (const [chunk, stream] of early) listener(chunk, stream);
  }

  emit(chunk: Uint8Array, stream: Stream): void {
    if (this.#early) {
      this.#early.push([chunk, stream]);
      return;
    }
    for (const listener of this.#listeners) listener(chunk, stream);
  }
}
