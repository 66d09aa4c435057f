/**
 * The last `capacity` bytes of a stream, in a fixed ring, so the end of a
 * huge output (where errors usually are) can still be shown past the output
 * cap or the render budget, while memory stays at `capacity`.
 */
export class ByteTail {
  readonly #ring: Uint8Array;
  #end = 0;
  #filled = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError('ByteTail: capacity must be a non-negative integer');
    this.#ring = new Uint8Array(capacity);
  }

  get length(): number {
    return this.#filled;
  }

  get capacity(): number {
    return this.#ring.length;
  }

  push(chunk: Uint8Array): void {
    const capacity = this.#ring.length;
    if (capacity === 0 || chunk.length === 0) return;
    if (chunk.length >= capacity) {
      this.#ring.set(chunk.subarray(chunk.length - capacity));
      this.#end = 0;
      this.#filled = capacity;
      return;
    }
    const first = Math.min(chunk.length, capacity - this.#end);
    this.#ring.set(chunk.subarray(0, first), this.#end);
    this.#ring.set(chunk.subarray(first), 0);
    this.#end = (this.#end + chunk.length) % capacity;
    this.#filled = Math.min(capacity, this.#filled + chunk.length);
  }

  /** The kept bytes, oldest first, as a new array. */
  bytes(): Uint8Array {
    const capacity = this.#ring.length;
    if (this.#filled < capacity) return this.#ring.slice(0, this.#filled);
    const out = new Uint8Array(capacity);
    out.set(this.#ring.subarray(this.#end), 0);
    out.set(this.#ring.subarray(0, this.#end), capacity - this.#end);
    return out;
  }
}
