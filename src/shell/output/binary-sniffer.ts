/** How many leading bytes of a stream decide whether it is binary (today's Gemini CLI: 4096). */
export const DEFAULT_SNIFF_BYTES = 4096;

/**
 * Above this share of bytes that cannot be part of valid UTF-8, the sample is
 * binary. Text in a legacy 8-bit encoding (e.g. Latin-1 accents) stays well
 * below it; random or compressed data is far above it (about 0.5).
 */
const INVALID_UTF8_RATIO = 0.3;

/**
 * True when `sample` looks like binary data: it holds a NUL byte, or too
 * many bytes that are not valid UTF-8. A multi-byte sequence cut off at the
 * end of the sample is not held against it (more bytes may complete it).
 */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.length === 0) return false;
  if (sample.includes(0)) return true;
  return countInvalidUtf8Bytes(sample) / sample.length > INVALID_UTF8_RATIO;
}

/** Bytes of `data` that do not belong to a well-formed UTF-8 sequence (a truncated tail counts as valid). */
export function countInvalidUtf8Bytes(data: Uint8Array): number {
  let invalid = 0;
  let i = 0;
  while (i < data.length) {
    const lead = data[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const length = sequenceLength(lead);
    if (length === 0) {
      invalid++;
      i++;
      continue;
    }
    let j = 1;
    while (j < length && i + j < data.length && isContinuation(data[i + j]!, lead, j)) j++;
    if (j === length || i + j === data.length) {
      i += j; // complete, or cut off by the end of the sample
    } else {
      invalid++;
      i++;
    }
  }
  return invalid;
}

function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** Continuation byte check, with the second-byte ranges that exclude overlongs, surrogates and > U+10FFFF. */
function isContinuation(byte: number, lead: number, index: number): boolean {
  if (index === 1) {
    if (lead === 0xe0) return byte >= 0xa0 && byte <= 0xbf;
    if (lead === 0xed) return byte >= 0x80 && byte <= 0x9f;
    if (lead === 0xf0) return byte >= 0x90 && byte <= 0xbf;
    if (lead === 0xf4) return byte >= 0x80 && byte <= 0x8f;
  }
  return byte >= 0x80 && byte <= 0xbf;
}

/**
 * Decides, over the first `limit` bytes of a stream, whether the stream is
 * binary. The verdict is re-checked as bytes arrive until the window is
 * full; once binary, it stays binary.
 */
export class BinarySniffer {
  readonly #limit: number;
  readonly #window: Uint8Array;
  #filled = 0;
  #binary = false;

  constructor(limit: number = DEFAULT_SNIFF_BYTES) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('BinarySniffer: limit must be a positive integer');
    this.#limit = limit;
    this.#window = new Uint8Array(limit);
  }

  /** True once the stream has been judged binary. */
  get binary(): boolean {
    return this.#binary;
  }

  /** Feeds the next chunk; returns true when this chunk made the stream binary. */
  push(chunk: Uint8Array): boolean {
    if (this.#binary || this.#filled >= this.#limit) return false;
    const take = Math.min(chunk.length, this.#limit - this.#filled);
    this.#window.set(chunk.subarray(0, take), this.#filled);
    this.#filled += take;
    if (looksBinary(this.#window.subarray(0, this.#filled))) {
      this.#binary = true;
      return true;
    }
    return false;
  }
}
