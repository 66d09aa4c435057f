import { breakLine } from '../text-width.js';
import { LiveRegion } from './live-region.js';

/** What the chat draws in the live region: lines, and where the input cursor is. */
export interface LiveView {
  lines: string[];
  cursor?: { row: number; col: number };
}

export interface ScreenOptions {
  output: NodeJS.WriteStream;
  /** Builds the live region's content; called on each render. */
  view: () => LiveView;
  /** Minimum time between two redraws caused by `requestRender` (ms). */
  throttleMs: number;
}

/**
 * The chat's output. On a terminal: streamed model text word-wrapped into the
 * scrollback, a live region redrawn in place at most every `throttleMs`.
 * Elsewhere (a pipe, a file): plain sequential text and no live region, so
 * nothing is redrawn and no progress is shown.
 */
export class Screen {
  readonly interactive: boolean;
  readonly #output: NodeJS.WriteStream;
  readonly #view: () => LiveView;
  readonly #throttleMs: number;
  readonly #region: LiveRegion | undefined;
  #pendingText = '';
  #plainLineOpen = false;
  #timer: NodeJS.Timeout | undefined;
  #lastRender = 0;
  #suspended = false;
  readonly #held: string[] = [];

  constructor(options: ScreenOptions) {
    this.#output = options.output;
    this.#view = options.view;
    this.#throttleMs = options.throttleMs;
    this.interactive = options.output.isTTY === true;
    if (this.interactive) {
      this.#region = new LiveRegion({
        write: (data) => void this.#output.write(data),
        columns: () => this.#output.columns || 80,
        rows: () => this.#output.rows || 24,
      });
    }
  }

  /** Prints whole lines into the scrollback (ends any streamed text first). */
  print(text: string): void {
    this.endText();
    if (this.#region) this.#printAbove(text);
    else this.#output.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Appends streamed model text. */
  streamText(chunk: string): void {
    if (!this.#region) {
      this.#output.write(chunk);
      this.#plainLineOpen = !chunk.endsWith('\n');
      return;
    }
    this.#pendingText += chunk;
    const width = Math.max(10, (this.#output.columns || 80) - 1);
    const complete: string[] = [];
    for (;;) {
      const newline = this.#pendingText.indexOf('\n');
      if (newline !== -1) {
        complete.push(this.#pendingText.slice(0, newline));
        this.#pendingText = this.#pendingText.slice(newline + 1);
        continue;
      }
      const split = breakLine(this.#pendingText, width);
      if (!split) break;
      complete.push(split[0]);
      this.#pendingText = split[1];
    }
    if (complete.length > 0) this.#printAbove(`${complete.join('\n')}\n`);
    else this.requestRender();
  }

  /** The partial line of streamed text not yet in the scrollback (shown at the top of the live region). */
  get pendingText(): string {
    return this.#pendingText;
  }

  /** Ends streamed text: its last partial line goes to the scrollback. */
  endText(): void {
    if (this.#pendingText !== '') {
      const text = this.#pendingText;
      this.#pendingText = '';
      if (this.#region) this.#printAbove(text);
    }
    if (this.#plainLineOpen) {
      this.#output.write('\n');
      this.#plainLineOpen = false;
    }
  }

  /** Prints into the scrollback and redraws the region with fresh content in the same write. */
  #printAbove(text: string): void {
    if (this.#suspended) {
      // The terminal belongs to a child (an editor): keep the text for when it is handed back.
      this.#held.push(text.endsWith('\n') ? text : `${text}\n`);
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastRender = Date.now();
    const view = this.#view();
    this.#region!.printAbove(text, view.lines, view.cursor);
  }

  /** Redraws the live region now. */
  render(): void {
    if (!this.#region || this.#suspended) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastRender = Date.now();
    const view = this.#view();
    this.#region.render(view.lines, view.cursor);
  }

  /** Redraws soon, at most once per `throttleMs` (live output may update far more often). */
  requestRender(): void {
    if (!this.#region || this.#suspended || this.#timer) return;
    const wait = Math.max(0, this.#lastRender + this.#throttleMs - Date.now());
    this.#timer = setTimeout(() => this.render(), wait);
  }

  /** Erases the live region and stops drawing (an external editor takes the terminal). */
  suspend(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#suspended = true;
    this.#region?.clear();
  }

  resume(): void {
    this.#suspended = false;
    const held = this.#held.splice(0);
    if (held.length > 0) this.#printAbove(held.join(''));
    else this.render();
  }

  /** Leaves the terminal clean: region erased, cursor visible. */
  close(): void {
    this.endText();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#region?.clear();
    this.#suspended = true;
  }
}
