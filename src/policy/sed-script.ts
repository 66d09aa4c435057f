/**
 * Whether a GNU sed script runs commands: the `e` command (`1e rm x`) and
 * the `e` flag of `s` (`s/.*\/rm x/e`) hand text to the shell. The script
 * is read as GNU sed reads it (addresses, `!`, blocks, `a`/`i`/`c` text to
 * the end of the line, file names of `r`/`w` to the end of the line, the
 * delimited parts of `s` and `y`), so an `e` inside a regular expression,
 * a replacement or a file name does not count. Returns the reason the
 * script cannot be allowed, or undefined; a script the reader does not
 * follow is never taken as harmless.
 */
export function sedScriptRisk(script: string): string | undefined {
  const reader = new SedReader(script);
  try {
    return reader.read();
  } catch (error) {
    if (error instanceof Unreadable) return `sed's script cannot be read with confidence (${error.message})`;
    throw error;
  }
}

class Unreadable extends Error {}

/** Commands that take nothing more (`p`, `d`, `}`…), and those that take an optional number (`q5`, `l 80`). */
const BARE = new Set('{}=dDgGhHnNpPxzF'.split(''));
const NUMBERED = new Set('lLqQ'.split(''));

class SedReader {
  #i = 0;
  readonly #s: string;

  constructor(script: string) {
    this.#s = script;
  }

  read(): string | undefined {
    const s = this.#s;
    while (this.#i < s.length) {
      while (this.#i < s.length && /[\s;]/u.test(s[this.#i]!)) this.#i++;
      if (this.#i >= s.length) break;
      if (s[this.#i] === '#') {
        this.#toLineEnd();
        continue;
      }
      if (this.#address()) {
        this.#spaces();
        if (s[this.#i] === ',') {
          this.#i++;
          this.#spaces();
          if (s[this.#i] === '+' || s[this.#i] === '~') {
            this.#i++;
            this.#digits();
          } else if (!this.#address()) throw new Unreadable('an address range without its end');
        }
      }
      this.#spaces();
      while (s[this.#i] === '!') {
        this.#i++;
        this.#spaces();
      }
      const command = s[this.#i++];
      if (command === undefined) throw new Unreadable('an address without a command');
      if (BARE.has(command)) continue;
      if (NUMBERED.has(command)) {
        this.#spaces();
        this.#digits();
        continue;
      }
      switch (command) {
        case 'e':
          return "sed's e command runs a command";
        case 'a':
        case 'i':
        case 'c':
        case 'r':
        case 'R':
        case 'w':
        case 'W':
          // Text or a file name, to the end of the line (a backslash continues the text).
          this.#toLineEnd();
          continue;
        case ':':
        case 'b':
        case 't':
        case 'T':
        case 'v':
          // A label ends at a newline or `;`: reading less of it than sed does would only read more commands.
          while (this.#i < s.length && s[this.#i] !== '\n' && s[this.#i] !== ';') this.#i++;
          continue;
        case 's': {
          const delimiter = this.#delimiter();
          this.#delimited(delimiter);
          this.#delimited(delimiter);
          for (;;) {
            const flag = s[this.#i];
            if (flag === 'e') return "sed's s command with the e flag runs its result as a command";
            if (flag === 'w') {
              this.#toLineEnd();
              break;
            }
            if (flag === undefined || !/[gpiImM0-9]/u.test(flag)) break;
            this.#i++;
          }
          continue;
        }
        case 'y': {
          const delimiter = this.#delimiter();
          this.#delimited(delimiter);
          this.#delimited(delimiter);
          continue;
        }
        default:
          throw new Unreadable(`the command ${JSON.stringify(command)}`);
      }
    }
    return undefined;
  }

  /** A line number (`3`, `0~4`), `$`, `/regex/` or `\cregexc` with its flags; false when there is none. */
  #address(): boolean {
    const s = this.#s;
    const c = s[this.#i];
    if (c !== undefined && /[0-9]/u.test(c)) {
      this.#digits();
      if (s[this.#i] === '~') {
        this.#i++;
        this.#digits();
      }
      return true;
    }
    if (c === '$') {
      this.#i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      this.#i++;
      this.#delimited(c === '/' ? '/' : this.#delimiter());
      while (s[this.#i] === 'I' || s[this.#i] === 'M') this.#i++;
      return true;
    }
    return false;
  }

  #delimiter(): string {
    const delimiter = this.#s[this.#i++];
    if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') throw new Unreadable('a missing or odd delimiter');
    return delimiter;
  }

  /** Up to the next delimiter not escaped by a backslash. */
  #delimited(delimiter: string): void {
    const s = this.#s;
    while (this.#i < s.length) {
      const c = s[this.#i]!;
      if (c === '\\') this.#i += 2;
      else {
        this.#i++;
        if (c === delimiter) return;
      }
    }
    throw new Unreadable('an unterminated expression');
  }

  #toLineEnd(): void {
    const s = this.#s;
    while (this.#i < s.length && s[this.#i] !== '\n') this.#i += s[this.#i] === '\\' ? 2 : 1;
  }

  #spaces(): void {
    while (this.#i < this.#s.length && (this.#s[this.#i] === ' ' || this.#s[this.#i] === '\t')) this.#i++;
  }

  #digits(): void {
    while (this.#i < this.#s.length && /[0-9]/u.test(this.#s[this.#i]!)) this.#i++;
  }
}
