import xterm from '@xterm/headless';
import type { IBuffer, IMarker, Terminal as XTerm } from '@xterm/headless';
import { BoundedText, type OmittedText } from './bounded-text.js';
import { EscapeCountClamp } from './escape-count-clamp.js';
import { DEFAULT_RENDER_BUDGET_MS, ParseBudget } from './parse-budget.js';

const { Terminal } = xterm;

/**
 * Slice size once the head is full: large enough to parse fast, small enough
 * that one slice of the costliest sequences (a few milliseconds each) cannot
 * hold the shell thread for long; xterm yields between slices.
 */
const FAST_SLICE_CHARS = 2048;
/** Slices handed to xterm at a time; the rest wait here, where they can still be dropped. */
const SLICES_IN_FLIGHT = 2;

export interface TerminalRendererOptions {
  cols: number;
  rows: number;
  /**
   * Lines xterm keeps above the screen. While the head of the output is
   * being collected, lines are copied out before they can fall off; after
   * that, the scrollback is the tail that will be shown.
   */
  scrollback: number;
  /** Characters kept from the start of the output, and (at most) from its end. */
  headChars: number;
  tailChars: number;
  /**
   * Milliseconds xterm may spend parsing this output. Past it, output still
   * queued and output written later are dropped (counted in
   * `unrenderedChars`): a few bytes of escape sequence can cost
   * milliseconds to emulate, and the renderer shares its thread.
   */
  renderBudgetMs?: number;
  /** Called after each parsed slice of output (the screen may have changed). */
  onParsed?: () => void;
}

/**
 * Renders a byte stream the way a terminal shows it, with @xterm/headless:
 * `\r` progress bars collapse to their last state, cursor movement and ANSI
 * colours disappear, long lines that the terminal wrapped are joined again.
 *
 * Lines that scrolled above the screen can no longer change (the cursor
 * cannot reach them). Until `headChars` are collected, they are copied out
 * after every parsed slice, and slices are never longer than the scrollback
 * so no line falls off first. After that, nothing is copied until the end:
 * the tail is what the scrollback and screen hold then, and the lines in
 * between are counted, not kept. Memory: the scrollback plus the head.
 *
 * Escape-sequence counts are clamped to the screen before xterm sees them
 * (EscapeCountClamp), and the time xterm spends parsing is capped
 * (ParseBudget), so the cost of rendering is bounded whatever the bytes.
 */
export class TerminalRenderer {
  readonly #terminal: XTerm;
  readonly #headSliceChars: number;
  readonly #decoder = new TextDecoder('utf-8');
  readonly #clamp: EscapeCountClamp;
  readonly #text: BoundedText;
  readonly #onParsed: (() => void) | undefined;
  readonly #budget: ParseBudget;
  /** Text not yet handed to xterm; the first entry from `#pendingOffset` on. */
  #pending: string[] = [];
  #pendingOffset = 0;
  #pendingChars = 0;
  #inFlightChars = 0;
  #inFlight = 0;
  #unrenderedChars = 0;
  /** First line of the normal buffer not yet copied into `#text`. */
  #marker: IMarker | undefined;
  #startedLine = false;
  #pendingNewlines = 0;
  #lineFeedsAfterHead = 0;
  #idleWaiters: Array<() => void> = [];
  #disposed = false;

  constructor(options: TerminalRendererOptions) {
    this.#terminal = new Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: options.scrollback,
      allowProposedApi: true,
      // Commands run with `stty -opost`, so a bare LF must also return the carriage.
      convertEol: true,
      logLevel: 'off',
    });
    this.#clamp = new EscapeCountClamp({ cols: options.cols, rows: options.rows });
    this.#headSliceChars = Math.max(1, options.scrollback);
    this.#text = new BoundedText({ headChars: options.headChars, tailChars: options.tailChars });
    this.#onParsed = options.onParsed;
    this.#budget = new ParseBudget(options.renderBudgetMs ?? DEFAULT_RENDER_BUDGET_MS);
    this.#marker = this.#terminal.registerMarker(0);
    this.#terminal.onLineFeed(() => {
      if (this.#text.headFull) this.#lineFeedsAfterHead++;
    });
  }

  /** Characters written that xterm has not parsed yet. */
  get backlog(): number {
    return this.#pendingChars + this.#inFlightChars;
  }

  /** True once the parse budget is spent: later output is counted, not rendered. */
  get exhausted(): boolean {
    return this.#budget.exhausted;
  }

  /** True when the text `finish` returns is not all the output: lines fell between its head and tail. */
  get cut(): boolean {
    return this.#text.cut;
  }

  /** Characters dropped because the parse budget was spent. */
  get unrenderedChars(): number {
    return this.#unrenderedChars;
  }

  write(bytes: Uint8Array): void {
    if (this.#disposed) return;
    // Decoded here rather than by xterm so that invalid UTF-8 shows as U+FFFD
    // instead of vanishing. A character never makes more than one new line.
    // Escape counts are clamped first: xterm would run them synchronously.
    this.#writeText(this.#clamp.push(this.#decoder.decode(bytes, { stream: true })));
  }

  #writeText(text: string): void {
    if (text.length === 0) return;
    if (this.#budget.exhausted) {
      this.#unrenderedChars += text.length;
      return;
    }
    this.#pending.push(text);
    this.#pendingChars += text.length;
    this.#pump();
  }

  /** Hands slices to xterm, sized by phase: the head phase is decided per slice. */
  #pump(): void {
    while (this.#inFlight < SLICES_IN_FLIGHT && this.#pending.length > 0) {
      const size = this.#text.headFull ? FAST_SLICE_CHARS : this.#headSliceChars;
      const first = this.#pending[0]!;
      const slice = first.slice(this.#pendingOffset, this.#pendingOffset + size);
      this.#pendingOffset += slice.length;
      if (this.#pendingOffset >= first.length) {
        this.#pending.shift();
        this.#pendingOffset = 0;
      }
      this.#pendingChars -= slice.length;
      this.#inFlightChars += slice.length;
      this.#inFlight++;
      this.#terminal.write('', () => this.#budget.markStart());
      this.#terminal.write(slice, () => this.#afterSlice(slice.length));
    }
  }

  /** Resolves once every written byte has been parsed. */
  whenIdle(): Promise<void> {
    if (this.backlog === 0 || this.#disposed) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** The last `maxLines` lines of what the terminal shows now, blank lines at the end left out (for live updates). */
  snapshot(maxLines: number): string {
    const buffer = this.#terminal.buffer.active;
    const end = lastUsedLine(buffer) + 1;
    const lines: string[] = [];
    // Walk back far enough to rebuild `maxLines` logical lines (wrapped rows join).
    let start = Math.max(0, end - maxLines);
    while (start > 0 && buffer.getLine(start)?.isWrapped) start--;
    for (let i = start; i < end; i++) {
      const line = buffer.getLine(i);
      if (!line) continue;
      const text = line.translateToString(!buffer.getLine(i + 1)?.isWrapped);
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return lines.slice(-maxLines).join('\n');
  }

  /**
   * Waits for the parser, copies the remaining lines and returns the whole
   * rendered text (trailing blank lines removed). When a full-screen program
   * left the alternate screen on, its screen is appended.
   */
  async finish(gapNote?: (omitted: OmittedText) => string): Promise<string> {
    if (!this.#disposed) this.#writeText(this.#clamp.push(this.#decoder.decode()) + this.#clamp.flush());
    await this.whenIdle();
    if (this.#disposed) return '';
    this.#harvest(true);
    let text = this.#text.toString(gapNote);
    if (this.#terminal.buffer.active.type === 'alternate') {
      const screen = this.snapshot(this.#terminal.rows).replace(/\s+$/, '');
      if (screen.length > 0) text = text.length > 0 ? `${text}\n${screen}` : screen;
    }
    return text;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#pending = [];
    this.#pendingChars = 0;
    this.#marker?.dispose();
    this.#terminal.dispose();
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  #afterSlice(length: number): void {
    this.#budget.markEnd();
    this.#inFlight--;
    this.#inFlightChars -= length;
    if (this.#disposed) return;
    if (!this.#text.headFull) this.#harvest(false);
    if (this.#budget.exhausted && this.#pending.length > 0) {
      this.#unrenderedChars += this.#pendingChars;
      this.#pending = [];
      this.#pendingOffset = 0;
      this.#pendingChars = 0;
    }
    this.#onParsed?.();
    this.#pump();
    if (this.backlog === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Copies final lines (above the screen, or all lines when `all`) of the normal buffer. */
  #harvest(all: boolean): void {
    const terminal = this.#terminal;
    // Markers are registered on the active buffer; while a full-screen program
    // uses the alternate screen the normal buffer does not move.
    if (!all && terminal.buffer.active.type !== 'normal') return;
    const buffer = terminal.buffer.normal;
    let start = 0;
    if (this.#marker && !this.#marker.isDisposed) {
      start = this.#marker.line;
    } else {
      // The marked line scrolled off: everything since the last copy that is
      // not in the buffer any more is gone. Count it and start a new line.
      this.#text.omitLines(Math.max(0, this.#lineFeedsAfterHead - (buffer.length - 1)));
      this.#startedLine = false;
      this.#pendingNewlines = 0;
    }
    const end = all ? buffer.length : buffer.baseY;
    let batch = '';
    let next = start < end ? buffer.getLine(start) : undefined;
    for (let i = start; i < end; i++) {
      const line = next;
      next = buffer.getLine(i + 1);
      if (!line) continue;
      const text = line.translateToString(!next?.isWrapped);
      if (!line.isWrapped || !this.#startedLine) {
        if (this.#startedLine) this.#pendingNewlines++;
        this.#startedLine = true;
      }
      if (text.length > 0) {
        if (this.#pendingNewlines === 1) batch += '\n';
        else if (this.#pendingNewlines > 1) batch += '\n'.repeat(this.#pendingNewlines);
        batch += text;
        this.#pendingNewlines = 0;
      }
    }
    this.#text.append(batch);
    if (all) return;
    this.#marker?.dispose();
    // Offset from the cursor row to the first screen row (buffer.baseY).
    this.#marker = terminal.registerMarker(-buffer.cursorY);
  }
}

/** Index of the last row that holds text (-1 when there is none). */
function lastUsedLine(buffer: IBuffer): number {
  for (let i = buffer.length - 1; i >= 0; i--) {
    if (buffer.getLine(i)?.translateToString(true).length) return i;
  }
  return -1;
}
