import RE2 from 're2';
import { ToolErrorType } from '../../../errors.js';

/**
 * grep_search's patterns are matched by RE2 (the `re2` binding), whose
 * matching time is linear in the text for a given pattern: JavaScript's
 * backtracking engine took 87 s on `^(a|aa)+$` against 44 `a`s, holding a
 * worker every tenant shares. What RE2 has no linear-time way to do is
 * refused: backreferences (`\1`, `\k<name>`), lookahead and lookbehind
 * (`(?=`, `(?!`, `(?<=`, `(?<!`), repetition counts over 1000, and the
 * JavaScript-only `[^]` (write `[\s\S]`).
 */
export const UNSUPPORTED_CONSTRUCTS =
  'backreferences (\\1, \\k<name>), lookahead and lookbehind ((?=, (?!, (?<=, (?<!), repetition counts over 1000, and [^] (write [\\s\\S])';

/**
 * Patterns longer than this are refused: RE2's time is linear in the text
 * times the size of the pattern's program (when its DFA gives up, the NFA
 * pays for every instruction per byte), so the pattern's size is bounded too.
 */
export const MAX_PATTERN_CHARS = 1000;

/** Lines searched at once before the search falls back to testing lines one by one (see LineRegex.searchLines). */
const CHUNK_BYTES = 64 * 1024;

export type CompiledLineRegex =
  { ok: true; regex: LineRegex } | { ok: false; type: typeof ToolErrorType.INVALID_TOOL_PARAMS | typeof ToolErrorType.UNSUPPORTED_PATTERN; message: string };

/**
 * Compiles a grep pattern, case-insensitively. Not a regular expression at
 * all (neither JavaScript nor RE2 reads it): `invalid_tool_params`. One that
 * JavaScript reads but RE2 cannot match in linear time: `unsupported_pattern`,
 * naming what is refused.
 */
export function compileLineRegex(pattern: string): CompiledLineRegex {
  if (pattern.length > MAX_PATTERN_CHARS)
    return {
      ok: false,
      type: ToolErrorType.INVALID_TOOL_PARAMS,
      message: `The pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted.`,
    };
  try {
    return { ok: true, regex: new LineRegex(pattern) };
  } catch (re2Error) {
    try {
      new RegExp(pattern, 'i');
    } catch (jsError) {
      return { ok: false, type: ToolErrorType.INVALID_TOOL_PARAMS, message: `Invalid regular expression pattern: ${(jsError as Error).message}` };
    }
    return {
      ok: false,
      type: ToolErrorType.UNSUPPORTED_PATTERN,
      message: `Patterns are matched in linear time (RE2), which does not support ${UNSUPPORTED_CONSTRUCTS}: ${(re2Error as Error).message}. Rewrite the pattern without it (for example, search for a simpler pattern and read the lines around the matches).`,
    };
  }
}

/**
 * A pattern matched against each line of a text alone, as grep does, in
 * time linear in the text. Lines are UTF-8 bytes: RE2 reads Buffers without
 * the conversion a string costs on every call.
 */
export class LineRegex {
  /** Matches one line by itself: the answer for that line. */
  readonly #line: RE2;
  /** Finds candidate lines in a run of many (multiline); each candidate is checked alone. */
  readonly #chunk: RE2 | undefined;

  constructor(pattern: string) {
    this.#line = new RE2(pattern, 'i');
    // \A, \z and inline flags ((?-m)…) can make the multiline search miss a
    // line that matches alone: such patterns are tested line by line only.
    this.#chunk = /\\[Az]|\(\?[A-Za-z-]/.test(pattern.replace(/\\\\/g, '')) ? undefined : new RE2(pattern, 'gim');
  }

  /**
   * Calls `onLine(start, end)` (byte offsets, end exclusive, no newline) for
   * each line of `text` that matches, in order, until it returns false.
   * `text` has `\n` line ends (no `\r` before them).
   *
   * Most lines of most files do not match, so the search runs over up to
   * 64 KiB of lines at a time and tests only the lines where a match starts.
   * A match can span lines (`\s`, `[^x]` match a newline): its first line,
   * tested alone, then fails, and the rest of that run is tested line by
   * line, so no run costs more than one scan per matching line plus one
   * pass over its lines.
   */
  searchLines(text: Buffer, onLine: (start: number, end: number) => boolean): void {
    for (let runStart = 0; runStart < text.length;) {
      let runEnd = Math.min(text.length, runStart + CHUNK_BYTES);
      if (runEnd < text.length) {
        const newline = text.indexOf(10, runEnd);
        runEnd = newline === -1 ? text.length : newline + 1;
      }
      if (!this.#searchRun(text.subarray(runStart, runEnd), runStart, onLine)) return;
      runStart = runEnd;
    }
    // A file ending in a newline has no line after it; an empty file has one empty line.
    if (text.length === 0 && this.#line.test(text)) onLine(0, 0);
  }

  /** False when `onLine` asked to stop. */
  #searchRun(run: Buffer, offset: number, onLine: (start: number, end: number) => boolean): boolean {
    let at = 0;
    let lineByLine = this.#chunk === undefined;
    while (at < run.length) {
      if (!lineByLine) {
        this.#chunk!.lastIndex = at;
        const found = this.#chunk!.exec(run);
        if (!found) return true;
        at = found.index === 0 ? 0 : run.lastIndexOf(10, found.index - 1) + 1;
        // An empty match after the run's last newline: no line starts there.
        if (at >= run.length) return true;
      }
      let end = run.indexOf(10, at);
      if (end === -1) end = run.length;
      if (this.#line.test(run.subarray(at, end))) {
        if (!onLine(offset + at, offset + end)) return false;
      } else if (!lineByLine) {
        lineByLine = true;
      }
      at = end + 1;
    }
    return true;
  }
}
