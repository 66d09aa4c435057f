import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';

/** Tail pieces shorter than this absorb the next append instead of adding a piece. */
const MERGE_BELOW_CHARS = 8192;

const boundedTextOptionsSchema = z.strictObject({ headChars: z.number().int().min(0), tailChars: z.number().int().min(0) });

/**
 * Text that grows by appends but keeps at most `headChars` from its start and
 * `tailChars` from its end, counting what fell in between. Memory stays
 * bounded however much is appended. Cuts fall on line boundaries when
 * possible, so the model never sees half a line at the gap.
 */
export class BoundedText {
  readonly #headChars: number;
  readonly #tailChars: number;
  #head = '';
  #headFull = false;
  /** Tail pieces, oldest first; their total length is `#tailLength`. */
  #tail: string[] = [];
  #tailLength = 0;
  #omittedChars = 0;
  #omittedLines = 0;

  constructor(raw: z.input<typeof boundedTextOptionsSchema>) {
    const options = parseOptions(boundedTextOptionsSchema, raw, 'BoundedText');
    this.#headChars = options.headChars;
    this.#tailChars = options.tailChars;
  }

  /** Characters dropped between head and tail. */
  get omittedChars(): number {
    return this.#omittedChars;
  }

  /** True when something fell between head and tail: `toString` is not all that was appended. */
  get cut(): boolean {
    return this.#omittedChars > 0 || this.#omittedLines > 0;
  }

  /** True once the head budget is used up: later appends only feed the tail. */
  get headFull(): boolean {
    return this.#headFull;
  }

  /**
   * Records whole lines that were dropped without being read (the caller
   * could not keep them). There is one gap only, between head and tail, so
   * what the tail held so far falls into it as well.
   */
  omitLines(lines: number): void {
    if (lines <= 0) return;
    this.#omittedLines += lines;
    this.#omittedChars += this.#tailLength;
    this.#tail = [];
    this.#tailLength = 0;
  }

  get length(): number {
    return this.#head.length + this.#tailLength;
  }

  append(text: string): void {
    if (text.length === 0) return;
    if (!this.#headFull) {
      const room = this.#headChars - this.#head.length;
      if (text.length <= room) {
        this.#head += text;
        return;
      }
      // Close the head at the last line break that fits, if there is one.
      const fits = text.slice(0, room);
      const lastBreak = fits.lastIndexOf('\n');
      const cut = lastBreak >= 0 ? lastBreak + 1 : room;
      this.#head += text.slice(0, cut);
      this.#headFull = true;
      text = text.slice(cut);
    }
    this.#appendTail(text);
  }

  #appendTail(text: string): void {
    if (this.#tailChars === 0) {
      this.#omittedChars += text.length;
      return;
    }
    // Small appends join the last piece, so the piece list stays short (V8 concatenates lazily).
    const last = this.#tail.length - 1;
    if (last >= 0 && this.#tail[last]!.length < MERGE_BELOW_CHARS) this.#tail[last] += text;
    else this.#tail.push(text);
    this.#tailLength += text.length;
    while (this.#tailLength > this.#tailChars) {
      const first = this.#tail[0]!;
      const excess = this.#tailLength - this.#tailChars;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailLength -= first.length;
        this.#omittedChars += first.length;
      } else {
        this.#tail[0] = first.slice(excess);
        this.#tailLength -= excess;
        this.#omittedChars += excess;
      }
    }
  }

  /**
   * The kept text; when something was dropped, `gapNote` is inserted on a
   * line of its own where the gap is.
   */
  toString(gapNote: (omitted: OmittedText) => string = defaultGapNote): string {
    const { head, tail, omitted } = this.parts();
    if (!omitted) return head + tail;
    const top = head.endsWith('\n') || head.length === 0 ? head : `${head}\n`;
    return `${top}${gapNote(omitted)}\n${tail}`;
  }

  /** The kept head and tail apart, and what fell between them (undefined when nothing did); the tail starts a line. */
  parts(): { head: string; tail: string; omitted: OmittedText | undefined } {
    let tail = this.#tail.join('');
    if (this.#omittedChars === 0 && this.#omittedLines === 0) return { head: this.#head, tail, omitted: undefined };
    // Start the tail at a line boundary so the gap does not split a line.
    const firstBreak = tail.indexOf('\n');
    let dropped = 0;
    if (this.#omittedChars > 0 && firstBreak >= 0 && firstBreak < tail.length - 1) {
      dropped = firstBreak + 1;
      tail = tail.slice(dropped);
    }
    return { head: this.#head, tail, omitted: { chars: this.#omittedChars + dropped, lines: this.#omittedLines } };
  }
}

/** What fell between head and tail: characters dropped by the budget, lines never read. */
export interface OmittedText {
  chars: number;
  lines: number;
}

/** `[... 1200 characters omitted ...]`, `[... 300 lines and 1200 characters omitted ...]`. */
export function defaultGapNote(omitted: OmittedText): string {
  const parts: string[] = [];
  if (omitted.lines > 0) parts.push(`${omitted.lines} lines`);
  if (omitted.chars > 0) parts.push(`${omitted.chars} characters`);
  return `[... ${parts.join(' and ')} omitted ...]`;
}
