/** One byte sequence to replace, and what replaces it. */
export interface Needle {
  bytes: Buffer;
  mark: Buffer;
}

/** A held-back start of a secret at least this long is redacted when the stream ends or jumps there. */
const PARTIAL_BYTES = 6;

/**
 * Redacts secrets from a byte stream that arrives in chunks: a secret split
 * between two chunks is still found, because the end of a chunk that could be
 * the start of a secret is held back until the next chunk (or the end) says
 * whether it is. Only that much is held: output that cannot begin a secret
 * passes at once. Works on raw bytes, before decoding, rendering and
 * truncation, so a cut in the output (the byte cap, the head and tail kept)
 * cannot leave half of a secret on each side.
 */
export class ByteStreamRedactor {
  readonly #needles: readonly Needle[];
  readonly #longest: number;
  #held: Buffer = Buffer.alloc(0);

  constructor(needles: readonly Needle[]) {
    this.#needles = needles;
    this.#longest = Math.max(0, ...needles.map((needle) => needle.bytes.length));
  }

  /** The bytes of `chunk` (and of what was held) that can be passed on now, redacted. */
  push(chunk: Uint8Array): Uint8Array {
    const data = this.#held.length > 0 ? Buffer.concat([this.#held, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const { out, rest } = this.#replace(data);
    const hold = this.#partialLength(data, rest);
    this.#held = Buffer.from(data.subarray(data.length - hold));
    out.push(data.subarray(rest, data.length - hold));
    return Buffer.concat(out);
  }

  /**
   * The stream ends, or jumps (the sandbox dropped what follows): what was
   * held goes out, redacted whole when it is a long enough start of a secret.
   */
  flush(): Uint8Array {
    const held = this.#held;
    this.#held = Buffer.alloc(0);
    if (held.length >= PARTIAL_BYTES) {
      const needle = this.#needles.find((candidate) => candidate.bytes.subarray(0, held.length).equals(held));
      if (needle) return needle.mark;
    }
    return held;
  }

  /** Replaces every whole secret; `rest` is where the unreplaced tail begins. */
  #replace(data: Buffer): { out: Buffer[]; rest: number } {
    const out: Buffer[] = [];
    let at = 0;
    for (;;) {
      let best: { index: number; needle: Needle } | undefined;
      for (const needle of this.#needles) {
        const index = data.indexOf(needle.bytes, at);
        if (index >= 0 && (!best || index < best.index || (index === best.index && needle.bytes.length > best.needle.bytes.length))) best = { index, needle };
      }
      if (!best) return { out, rest: at };
      out.push(data.subarray(at, best.index), best.needle.mark);
      at = best.index + best.needle.bytes.length;
    }
  }

  /** Length of the longest end of `data` (after `from`) that is a proper start of some secret. */
  #partialLength(data: Buffer, from: number): number {
    const most = Math.min(this.#longest - 1, data.length - from);
    for (let length = most; length > 0; length--) {
      const tail = data.subarray(data.length - length);
      if (this.#needles.some((needle) => needle.bytes.length > length && needle.bytes.subarray(0, length).equals(tail))) return length;
    }
    return 0;
  }
}
