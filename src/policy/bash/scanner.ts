/** A syntax error, or a form the parser does not follow with certainty: the command cannot be judged. */
export class BashSyntaxError extends Error {
  constructor(message: string) {
    // No stack trace: a pathological line may raise thousands of these (one per backtick substitution), and only the message is used.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

/** The line holds more than MAX_PARSED_COMMANDS commands: parsing stops everywhere, nested texts included. */
export class BashLimitError extends BashSyntaxError {}

/** How deep constructs may nest before the line is refused (a 1 MB `$($($(…` must not exhaust the stack). */
export const MAX_NESTING = 100;
/** How many commands a line may hold before the rest is not parsed: past them the line cannot be judged anyway. */
export const MAX_PARSED_COMMANDS = 10_000;

/**
 * Reads a command line character by character. Bash removes a
 * backslash-newline before it splits words, except inside single quotes,
 * `$'…'`, comments and quoted here-documents: `peek`/`next` skip them, the
 * `raw` variants do not.
 */
export class Scanner {
  readonly src: string;
  pos: number;
  /** Nesting of constructs being parsed, checked against MAX_NESTING. */
  depth = 0;
  /** Commands parsed so far, shared with the texts parsed from this one (backticks), checked against MAX_PARSED_COMMANDS. */
  count: { commands: number } = { commands: 0 };

  constructor(src: string, pos = 0) {
    this.src = src;
    this.pos = pos;
  }

  /** Skips backslash-newline pairs at the current position. */
  skipContinuations(): void {
    while (this.src.charCodeAt(this.pos) === 92 && this.src.charCodeAt(this.pos + 1) === 10) this.pos += 2;
  }

  /** The next character ('' at the end), after line continuations. */
  peek(): string {
    this.skipContinuations();
    return this.src[this.pos] ?? '';
  }

  /**
   * The character after the next one, line continuations skipped between
   * them too (`&\<newline>&` is `&&`).
   */
  peek2(): string {
    this.skipContinuations();
    let at = this.pos + 1;
    while (this.src.charCodeAt(at) === 92 && this.src.charCodeAt(at + 1) === 10) at += 2;
    return this.src[at] ?? '';
  }

  next(): string {
    this.skipContinuations();
    return this.src[this.pos++] ?? '';
  }

  /** The next character as it is: the one a backslash quotes. */
  nextRaw(): string {
    return this.src[this.pos++] ?? '';
  }

  /** The character at the position, continuations not skipped. */
  peekRaw(offset = 0): string {
    return this.src[this.pos + offset] ?? '';
  }

  atEnd(): boolean {
    this.skipContinuations();
    return this.pos >= this.src.length;
  }

  fail(message: string): never {
    throw new BashSyntaxError(message);
  }

  /** Enters a nested construct; `leave` leaves it. */
  enter(): void {
    if (++this.depth > MAX_NESTING) this.fail(`constructs nested more than ${MAX_NESTING} deep`);
  }

  leave(): void {
    this.depth--;
  }
}

/** Space and tab separate words; a newline ends a command. */
export const BLANK = new Set([' ', '\t']);
/** Characters that end an unquoted word. */
export const METACHARACTERS = new Set([' ', '\t', '\n', '|', '&', ';', '(', ')', '<', '>', '']);

/** Whether `c` is one of `chars`; never for '' (the end of the text). */
export function oneOf(c: string, chars: string): boolean {
  return c !== '' && chars.includes(c);
}

export function isNameStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}

export function isNameChar(c: string): boolean {
  return isNameStart(c) || (c >= '0' && c <= '9');
}

export const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/u;
