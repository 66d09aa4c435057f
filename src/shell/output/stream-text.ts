import { BoundedText, type OmittedText } from './bounded-text.js';

/** Longest line kept for live updates; a longer line shows its end. */
const LIVE_LINE_CHARS = 4096;

/**
 * One pipe's output (pipes mode) as text: decoded as UTF-8 across chunk
 * boundaries, kept as head + tail within a character budget. No terminal
 * emulation: the bytes are what a program wrote for another program.
 */
export class StreamText {
  readonly #decoder = new TextDecoder('utf-8');
  readonly #text: BoundedText;
  readonly #liveLines: number;
  #recent: string[] = [];

  constructor(options: { headChars: number; tailChars: number; liveLines: number }) {
    this.#text = new BoundedText({ headChars: options.headChars, tailChars: options.tailChars });
    this.#liveLines = Math.max(1, options.liveLines);
  }

  write(bytes: Uint8Array): void {
    const text = this.#decoder.decode(bytes, { stream: true });
    this.#text.append(text);
    this.#remember(text);
  }

  /** True when the kept text is not all of it (see BoundedText.cut). */
  get cut(): boolean {
    return this.#text.cut;
  }

  /** The last lines seen, at most `liveLines` (for live updates). */
  recentLines(): string {
    return this.#recent.join('\n');
  }

  finish(gapNote?: (omitted: OmittedText) => string): string {
    this.#text.append(this.#decoder.decode());
    return this.#text.toString(gapNote);
  }

  #remember(text: string): void {
    if (text.length === 0) return;
    const parts = text.split('\n');
    if (this.#recent.length > 0) this.#recent[this.#recent.length - 1] += parts.shift()!;
    this.#recent.push(...parts.slice(-this.#liveLines).map((line) => line.slice(-LIVE_LINE_CHARS)));
    if (this.#recent.length > this.#liveLines) this.#recent.splice(0, this.#recent.length - this.#liveLines);
    const last = this.#recent.length - 1;
    if (this.#recent[last]!.length > LIVE_LINE_CHARS) this.#recent[last] = this.#recent[last]!.slice(-LIVE_LINE_CHARS);
  }
}
