import { readBacktick, readDollar, readDouble, readSingle, type NestedParser } from './expansions.js';
import { BashSyntaxError, METACHARACTERS, Scanner } from './scanner.js';
import type { Word } from './syntax.js';
import { plainWord, WordBuilder } from './word-builder.js';

/**
 * Where a word is read: `normal`; `cond` inside `[[ ]]` (where bash reads
 * extended glob patterns `@(…)`); `regex` after `=~` (parentheses, `|` and
 * blanks inside parentheses belong to the word).
 */
export type WordMode = 'normal' | 'cond' | 'regex';

const GLOB = new Set(['*', '?', '[']);
/** Characters with no special meaning in an unquoted word (bash's metacharacters are only space, tab and newline). */
const PLAIN_RUN = /[^ \t\n|&;()<>'"\\$`*?[\]{}~@!+=:]+/uy;
const EXTGLOB = new Set(['@', '!', '+', '*', '?']);

/**
 * Reads one word at the scanner (blanks already skipped); undefined when
 * the next character ends words (a metacharacter, or the end).
 */
export function readWord(s: Scanner, p: NestedParser, mode: WordMode = 'normal'): Word | undefined {
  const start = s.pos;
  const b = new WordBuilder();
  let groups = 0;
  let previous = '';
  let braces = false;
  for (;;) {
    const c = s.peek();
    if (c === '') break;
    if ((c === '<' || c === '>') && s.peek2() === '(' && mode !== 'regex') {
      // Process substitution, also in the middle of a word (`a<(b)`).
      s.next();
      s.next();
      s.enter();
      b.addPrograms(p.untilParen(s));
      s.leave();
      b.dynamic();
      previous = ')';
      continue;
    }
    if (mode === 'regex' && (c === '(' || (c === ')' && groups > 0) || (groups > 0 && METACHARACTERS.has(c)) || c === '|')) {
      if (c === '(') groups++;
      if (c === ')') groups--;
      b.text(s.next());
      b.dynamic();
      previous = c;
      continue;
    }
    if (c === '(' && mode === 'cond' && EXTGLOB.has(previous)) {
      readExtglobGroup(s, b, p);
      previous = ')';
      continue;
    }
    if (METACHARACTERS.has(c)) break;
    // A run of ordinary characters at once (a 128 KiB argument must not cost one step per character).
    PLAIN_RUN.lastIndex = s.pos;
    const run = PLAIN_RUN.exec(s.src);
    if (run) {
      b.text(run[0]);
      s.pos += run[0].length;
      previous = run[0][run[0].length - 1]!;
      continue;
    }
    previous = c;
    if (c === '\\') {
      s.next();
      const escaped = s.nextRaw();
      b.text(escaped === '' ? '\\' : escaped);
      previous = '';
    } else if (c === "'") {
      s.next();
      readSingle(s, b);
      previous = '';
    } else if (c === '"') {
      s.next();
      readDouble(s, b, p);
      previous = '';
    } else if (c === '$') readDollar(s, b, p, false);
    else if (c === '`') readBacktick(s, b, p, false);
    else {
      s.next();
      if (GLOB.has(c)) {
        // Pathname expansion: the value is whatever file names match.
        b.dynamic();
        b.fromData = true;
      } else if (c === '{' || c === '}') braces = true;
      else if (c === '~' && (s.pos - 1 === start || '=:'.includes(s.src[s.pos - 2] ?? ''))) b.dynamic();
      b.text(c);
    }
  }
  if (s.pos === start) return undefined;
  const raw = s.src.slice(start, s.pos);
  // Brace expansion (`{rm,-rf}`, `{1..3}`) makes several words at run time; a lone `{}` or `{` is literal.
  if (braces && b.literal && !['{}', '{', '}'].includes(raw)) b.dynamic();
  return b.build(raw);
}

/** `@( … )` and its kin inside `[[ ]]`: a pattern, read up to its closing parenthesis. */
function readExtglobGroup(s: Scanner, b: WordBuilder, p: NestedParser): void {
  s.enter();
  s.next();
  b.dynamic();
  let depth = 1;
  while (depth > 0) {
    const c = s.peek();
    if (c === '') s.fail('a pattern group is not closed');
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === '\\') {
      s.next();
      s.nextRaw();
    } else if (c === "'") {
      s.next();
      readSingle(s, new WordBuilder());
    } else if (c === '"') {
      s.next();
      readDouble(s, b, p);
    } else if (c === '$') readDollar(s, b, p, false);
    else if (c === '`') readBacktick(s, b, p, false);
    else s.next();
  }
  s.leave();
}

/**
 * An unquoted here-document body, expanded as bash expands it: parameters,
 * `$( )`, backticks and arithmetic; a backslash quotes only `$`, `` ` ``
 * and `\`; quotes are ordinary characters.
 */
export function readHeredocBody(body: string, p: NestedParser): Word {
  const s = new Scanner(body);
  const b = new WordBuilder();
  try {
    readHeredocParts(s, b, p);
  } catch (error) {
    // Bash expands the body when the command runs: an expansion it cannot complete fails that command only.
    if (!(error instanceof BashSyntaxError)) throw error;
    b.addProblems(`a here-document body has an expansion bash cannot complete (${error.message})`);
  }
  const word = b.build(body);
  return word.programs.length > 0 || word.vars.length > 0 || word.problems.length > 0 ? word : plainWord(body);
}

function readHeredocParts(s: Scanner, b: WordBuilder, p: NestedParser): void {
  const body = s.src;
  while (s.pos < body.length) {
    const c = s.peekRaw();
    if (c === '\\' && '$`\\'.includes(s.peekRaw(1)) && s.peekRaw(1) !== '') {
      s.pos += 2;
      b.text(s.src[s.pos - 1]!);
    } else if (c === '$') readDollar(s, b, p, true);
    else if (c === '`') readBacktick(s, b, p, false);
    else b.text(s.src[s.pos++]!);
  }
}
