/**
 * Splits a byte stream into length-prefixed frames. Used twice on the way up
 * from a container: for Docker's attach multiplexing (8-byte headers) and for
 * the supervisor's own frames (9-byte headers) inside the stdout stream.
 *
 * Payloads that arrive inside one chunk are handed out as views (no copy);
 * only a payload spread over several chunks is concatenated once. That keeps
 * a 256 MB flood linear, unlike a decoder that concatenates its whole buffer
 * on every chunk.
 */
export class FrameDecoder {
  readonly #headerSize: number;
  readonly #payloadLength: (header: Buffer) => number;
  readonly #onFrame: (header: Buffer, payload: Buffer) => void;
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Header of the frame whose payload is still arriving. */
  #pendingHeader: Buffer | null = null;
  #pendingLength = 0;

  constructor(options: { headerSize: number; payloadLength: (header: Buffer) => number; onFrame: (header: Buffer, payload: Buffer) => void }) {
    this.#headerSize = options.headerSize;
    this.#payloadLength = options.payloadLength;
    this.#onFrame = options.onFrame;
  }

  /** Bytes received but not yet handed out as a frame. */
  get buffered(): number {
    return this.#buffered;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    for (;;) {
      if (this.#pendingHeader === null) {
        if (this.#buffered < this.#headerSize) return;
        this.#pendingHeader = this.#take(this.#headerSize, true);
        this.#pendingLength = this.#payloadLength(this.#pendingHeader);
      }
      if (this.#buffered < this.#pendingLength) return;
      const header = this.#pendingHeader;
      const payload = this.#take(this.#pendingLength, false);
      this.#pendingHeader = null;
      this.#onFrame(header, payload);
    }
  }

  /** Removes `size` bytes from the front; `copy` detaches small headers from big chunks. */
  #take(size: number, copy: boolean): Buffer {
    this.#buffered -= size;
    if (size === 0) return Buffer.alloc(0);
    const first = this.#chunks[0]!;
    if (first.length >= size) {
      const part = first.subarray(0, size);
      if (first.length === size) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(size);
      return copy ? Buffer.from(part) : part;
    }
    const result = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const chunk = this.#chunks[0]!;
      const wanted = size - filled;
      if (chunk.length <= wanted) {
        chunk.copy(result, filled);
        filled += chunk.length;
        this.#chunks.shift();
      } else {
        chunk.copy(result, filled, 0, wanted);
        this.#chunks[0] = chunk.subarray(wanted);
        filled += wanted;
      }
    }
    return result;
  }
}
