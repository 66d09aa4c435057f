/**
 * A few bytes of escape sequence can ask a terminal for unbounded work:
 * xterm.js runs `CSI 999999999 S` as a billion line splices in one
 * synchronous call, and `CSI 100000000 b` allocates and prints a hundred
 * million cells. In the shell thread that stalls every session it serves,
 * past any timeout. This filter sits between the decoded output and the
 * headless terminal and lowers such counts to the largest value that still
 * changes the screen, so what is rendered stays the same while the cost is
 * bounded by the screen size.
 *
 * It follows xterm's own parser (EscapeSequenceParser) closely enough to
 * find every CSI that xterm will dispatch: ESC `[` or C1 `0x9B` start one
 * from any state, C0 controls inside it run at once, CAN/SUB/ESC/C1 abort
 * it. Numbers are re-emitted in normal form (capped at 2^31-1 as xterm caps
 * them), so an attacker cannot make it buffer a million leading zeros.
 */

/** xterm's cap for one numeric parameter. */
const MAX_PARAM = 0x7fffffff;
/** xterm keeps 32 parameters and 32 sub-parameters; later ones are ignored, so they are dropped here. */
const MAX_FIELDS = 64;
/** Intermediates kept; no handler uses more than one. */
const MAX_INTERMEDIATES = 8;

/**
 * Finals whose cost grows with the count, and which change nothing more once
 * the count passes the screen's height: scroll up/down (S, T), insert/delete
 * lines (L, M), and cursor up (A, bounded anyway; SP A is scroll right).
 */
const ROW_BOUNDED_FINALS = new Set(['S', 'T', 'L', 'M', 'A']);
/**
 * The same for the width: tab forward/back (I, Z), insert/delete/erase
 * characters (@, P, X), insert/delete columns (' }, ' ~), scroll left and
 * right (SP @, SP A).
 */
const COLUMN_BOUNDED_FINALS = new Set(['I', 'Z', '@', 'P', 'X', '}', '~']);
/** REP: repeat the preceding character. */
const REPEAT_FINAL = 'b';

const ESC = 0x1b;
const CSI_C1 = 0x9b;

type State = 'text' | 'escape' | 'csi' | 'csi_ignore';
type CsiPhase = 'entry' | 'param' | 'intermediate';

export interface EscapeCountClampOptions {
  cols: number;
  rows: number;
}

export class EscapeCountClamp {
  readonly #rows: number;
  readonly #cols: number;
  readonly #cells: number;
  #state: State = 'text';
  // The CSI being collected (state 'csi').
  #phase: CsiPhase = 'entry';
  #head = '';
  #fields: number[] = [];
  #separators: string[] = [];
  /** Value of the parameter being read; -1 while it has no digit. */
  #current = -1;
  #intermediates = '';

  constructor(options: EscapeCountClampOptions) {
    this.#cols = options.cols;
    this.#rows = options.rows;
    this.#cells = options.cols * options.rows;
  }

  /** Filters the next piece of decoded output; a sequence split across pieces is held until it ends. */
  push(text: string): string {
    let out = '';
    let i = 0;
    const length = text.length;
    while (i < length) {
      if (this.#state === 'text') {
        // Fast path: plain text up to the next ESC or C1 CSI is passed through as one slice.
        let j = i;
        while (j < length) {
          const c = text.charCodeAt(j);
          if (c === ESC || c === CSI_C1) break;
          j++;
        }
        if (j > i) out += text.slice(i, j);
        i = j;
        if (i >= length) break;
      }
      out += this.#step(text.charCodeAt(i), text[i]!);
      i++;
    }
    return out;
  }

  /** Ends the stream: a sequence still open is passed on unchanged (xterm never dispatches it). */
  flush(): string {
    if (this.#state !== 'csi') return '';
    this.#state = 'text';
    return this.#build(undefined);
  }

  #step(code: number, char: string): string {
    switch (this.#state) {
      case 'text':
        if (code === CSI_C1) return this.#startCsi(char);
        this.#state = 'escape';
        return char;
      case 'escape':
        return this.#stepEscape(code, char);
      case 'csi':
        return this.#stepCsi(code, char);
      case 'csi_ignore':
        return this.#stepIgnore(code, char);
    }
  }

  #stepEscape(code: number, char: string): string {
    if (code === 0x5b || code === CSI_C1) return this.#startCsi(char);
    // ESC again, C0 controls (except CAN/SUB) and DEL keep xterm in the escape state.
    if (code === ESC || code === 0x7f || (code < 0x20 && code !== 0x18 && code !== 0x1a)) return char;
    this.#state = 'text';
    return char;
  }

  #stepCsi(code: number, char: string): string {
    if (code >= 0x30 && code <= 0x39) {
      if (this.#phase === 'intermediate') return this.#toIgnore(char);
      this.#phase = 'param';
      const digit = code - 0x30;
      this.#current = this.#current < 0 ? digit : Math.min(this.#current * 10 + digit, MAX_PARAM);
      return '';
    }
    if (code === 0x3a || code === 0x3b) {
      if (this.#phase === 'intermediate') return this.#toIgnore(char);
      this.#phase = 'param';
      if (this.#fields.length < MAX_FIELDS) {
        this.#fields.push(this.#current);
        this.#separators.push(char);
      }
      this.#current = -1;
      return '';
    }
    if (code >= 0x3c && code <= 0x3f) {
      if (this.#phase !== 'entry') return this.#toIgnore(char);
      this.#head += char;
      this.#phase = 'param';
      return '';
    }
    if (code >= 0x20 && code <= 0x2f) {
      this.#phase = 'intermediate';
      if (this.#intermediates.length < MAX_INTERMEDIATES) this.#intermediates += char;
      return '';
    }
    if (code >= 0x40 && code <= 0x7e) {
      this.#state = 'text';
      return this.#build(char);
    }
    if (code === 0x7f) return '';
    if (code < 0x20 && code !== 0x18 && code !== 0x1a && code !== ESC) {
      // xterm runs C0 controls inside a CSI at once and carries on with it.
      return char;
    }
    // CAN, SUB, ESC, C1 controls and other characters end the sequence undispatched.
    const pending = this.#build(undefined);
    if (code === CSI_C1) return pending + this.#startCsi(char);
    this.#state = code === ESC ? 'escape' : 'text';
    return pending + char;
  }

  #stepIgnore(code: number, char: string): string {
    if (code === CSI_C1) return this.#startCsi(char);
    if (code === ESC) this.#state = 'escape';
    else if ((code >= 0x40 && code <= 0x7e) || code === 0x18 || code === 0x1a || (code >= 0x80 && code <= 0x9f)) this.#state = 'text';
    return char;
  }

  #startCsi(introducer: string): string {
    this.#state = 'csi';
    this.#phase = 'entry';
    this.#head = introducer;
    this.#fields = [];
    this.#separators = [];
    this.#current = -1;
    this.#intermediates = '';
    return '';
  }

  /** xterm ignores the rest of this sequence: pass what was collected and what follows unchanged. */
  #toIgnore(char: string): string {
    const pending = this.#build(undefined);
    this.#state = 'csi_ignore';
    return pending + char;
  }

  /** The collected sequence in normal form, counts clamped when `final` makes them costly. */
  #build(final: string | undefined): string {
    const values = [...this.#fields, this.#current];
    let params = '';
    for (let k = 0; k < values.length; k++) {
      const value = values[k]!;
      if (value >= 0) params += String(final === undefined ? value : this.#clamp(final, value));
      params += this.#separators[k] ?? '';
    }
    return `${this.#head}${params}${this.#intermediates}${final ?? ''}`;
  }

  #clamp(final: string, value: number): number {
    if (final === 'A' && this.#intermediates === ' ') return Math.min(value, this.#cols);
    if (ROW_BOUNDED_FINALS.has(final)) return Math.min(value, this.#rows);
    if (COLUMN_BOUNDED_FINALS.has(final)) return Math.min(value, this.#cols);
    // Past a screenful the repeats only scroll; keeping the count modulo the
    // width keeps the cursor where the full count would have left it.
    if (final === REPEAT_FINAL && value > this.#cells) return this.#cells + (value % this.#cols);
    return value;
  }
}
