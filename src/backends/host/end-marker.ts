/**
 * Finds the end marker the PTY wrapper prints after the command finished,
 * and removes it from the stream. A marker split across chunks is found
 * too: a chunk's tail that could be the start of the marker is held back
 * until the next chunk (or `flush`) decides.
 */
export class EndMarkerScanner {
  readonly #marker: Buffer;
  #carry: Buffer = Buffer.alloc(0);
  #seen = false;

  constructor(marker: string) {
    if (marker.length === 0) throw new RangeError('EndMarkerScanner: marker must not be empty');
    this.#marker = Buffer.from(marker, 'latin1');
  }

  get seen(): boolean {
    return this.#seen;
  }

  /** The output bytes of `chunk` (marker removed, a possible marker start held back); true in `marker` when it was found. */
  push(chunk: Uint8Array): { data: Buffer; marker: boolean } {
    let bytes = this.#carry.length > 0 ? Buffer.concat([this.#carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#carry = Buffer.alloc(0);
    let marker = false;
    const at = bytes.indexOf(this.#marker);
    if (at >= 0) {
      marker = true;
      this.#seen = true;
      bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + this.#marker.length)]);
    }
    const held = this.#partialMarkerLength(bytes);
    if (held > 0) {
      this.#carry = Buffer.from(bytes.subarray(bytes.length - held));
      bytes = bytes.subarray(0, bytes.length - held);
    }
    return { data: bytes, marker };
  }

  /** Whatever was held back (the stream ended). */
  flush(): Buffer {
    const rest = this.#carry;
    this.#carry = Buffer.alloc(0);
    return rest;
  }

  /** Length of the longest tail of `bytes` that is a proper prefix of the marker. */
  #partialMarkerLength(bytes: Buffer): number {
    const marker = this.#marker;
    const first = marker[0]!;
    const from = Math.max(0, bytes.length - marker.length + 1);
    for (let start = bytes.indexOf(first, from); start >= 0; start = bytes.indexOf(first, start + 1)) {
      const length = bytes.length - start;
      if (bytes.compare(marker, 0, length, start, bytes.length) === 0) return length;
    }
    return 0;
  }
}
