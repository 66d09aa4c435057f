import { truncateToWidth } from '../text-width.js';

export interface LiveRegionOptions {
  write: (data: string) => void;
  columns: () => number;
  rows: () => number;
}

/**
 * The bottom of the terminal that is redrawn in place (running calls, the
 * dialog, the input line, the status bar), below text that scrolls away
 * normally. Each region line is cut to the terminal width so one line is one
 * row, and the region never grows past the screen (its top lines go first),
 * so moving the cursor back up to redraw it always lands where it began.
 */
export class LiveRegion {
  readonly #options: LiveRegionOptions;
  #lines: string[] = [];
  #cursor: { row: number; col: number } | undefined;
  /** Row of the cursor within the drawn region, counted from its top. */
  #cursorRow = 0;
  #drawn = false;

  constructor(options: LiveRegionOptions) {
    this.#options = options;
  }

  /**
   * Replaces the region. `cursor` places the visible cursor (e.g. in the
   * input line); without it the cursor is hidden.
   */
  render(lines: string[], cursor?: { row: number; col: number }): void {
    this.#lines = lines;
    this.#cursor = cursor;
    this.#options.write(this.#eraseSequence() + this.#drawSequence());
  }

  /**
   * Prints text above the region (it scrolls away like normal output), then
   * draws the region again, with new lines when given.
   */
  printAbove(text: string, lines?: string[], cursor?: { row: number; col: number }): void {
    if (text === '') return;
    if (lines) {
      this.#lines = lines;
      this.#cursor = cursor;
    }
    const body = text.endsWith('\n') ? text : `${text}\n`;
    this.#options.write(this.#eraseSequence() + body.replace(/\r?\n/g, '\r\n') + this.#drawSequence());
  }

  /** Erases the region and leaves the cursor where it began, visible (before exiting or handing over the terminal). */
  clear(): void {
    this.#options.write(`${this.#eraseSequence()}\x1b[?25h`);
  }

  /** Draws the last lines again (after the terminal was handed back). */
  redraw(): void {
    this.#options.write(this.#drawSequence());
  }

  #eraseSequence(): string {
    if (!this.#drawn) return '';
    this.#drawn = false;
    return `\r${this.#cursorRow > 0 ? `\x1b[${this.#cursorRow}A` : ''}\x1b[J`;
  }

  #drawSequence(): string {
    const columns = Math.max(1, this.#options.columns() - 1);
    const maxRows = Math.max(1, this.#options.rows() - 1);
    const skipped = Math.max(0, this.#lines.length - maxRows);
    const lines = this.#lines.slice(skipped).map((line) => truncateToWidth(line, columns));
    if (lines.length === 0) {
      this.#cursorRow = 0;
      return '\x1b[?25l';
    }
    this.#drawn = true;
    let sequence = `\x1b[?25l${lines.join('\r\n')}`;
    this.#cursorRow = lines.length - 1;
    const cursor = this.#cursor;
    if (cursor && cursor.row - skipped >= 0 && cursor.row - skipped < lines.length) {
      const row = cursor.row - skipped;
      const up = lines.length - 1 - row;
      sequence += `${up > 0 ? `\x1b[${up}A` : ''}\r${cursor.col > 0 ? `\x1b[${Math.min(cursor.col, columns)}C` : ''}\x1b[?25h`;
      this.#cursorRow = row;
    }
    return sequence;
  }
}
