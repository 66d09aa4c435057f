import { readArith, type NestedParser } from './expansions.js';
import { heredocDelimiter, type PendingHeredoc } from './heredoc.js';
import { BashSyntaxError, isNameChar, isNameStart, type Scanner } from './scanner.js';
import type { Assignment, Redirect, Word } from './syntax.js';
import { plainWord, WordBuilder } from './word-builder.js';
import type { WordMode } from './words.js';

/** What assignments and redirections need of the parser (parser.ts's BashParser). */
export interface PartsParser extends NestedParser {
  readonly s: Scanner;
  skipBlanks(): void;
  skipSeparators(): void;
  readWord(mode?: WordMode): Word | undefined;
  /** A here-document whose body follows the current line. */
  pendHeredoc(heredoc: PendingHeredoc, redirect: Redirect): void;
}

/** What a redirection can start with: an fd number, `{name}`, or an operator. */
const REDIRECT_START = /^[0-9{<>&]$/u;
const REDIRECT_OPS = ['<<<', '<<-', '&>>', '<<', '<&', '<>', '>>', '>&', '>|', '&>', '<', '>'];

/** `name=…`, `name+=…`, `name[sub]=…`, `name=(…)` at the scanner; undefined (nothing consumed) for any other word. */
export function readAssignment(p: PartsParser): Assignment | undefined {
  const s: Scanner = p.s;
  const start = s.pos;
  if (!isNameStart(s.peek())) return undefined;
  let name = '';
  while (isNameChar(s.peek())) name += s.next();
  let subscript: Word | undefined;
  if (s.peek() === '[') {
    const subStart = s.pos;
    s.next();
    const b = new WordBuilder();
    try {
      readArith(s, b, p, ']');
    } catch (error) {
      if (!(error instanceof BashSyntaxError)) throw error;
      s.pos = start;
      return undefined;
    }
    s.next();
    b.dynamic();
    subscript = b.build(s.src.slice(subStart, s.pos));
  }
  const append = s.peek() === '+' && s.peek2() === '=';
  if (append) s.next();
  if (s.peek() !== '=') {
    s.pos = start;
    return undefined;
  }
  s.next();
  if (s.peek() === '(') {
    s.next();
    const elements: Word[] = [];
    for (;;) {
      p.skipSeparators();
      if (s.peek() === ')') break;
      const element = p.readWord();
      if (!element) s.fail('unexpected character in an array assignment');
      elements.push(element);
    }
    s.next();
    return { raw: s.src.slice(start, s.pos), name, elements, ...(subscript ? { subscript } : {}), ...(append ? { append } : {}) };
  }
  const value = p.readWord() ?? plainWord('');
  return { raw: s.src.slice(start, s.pos), name, value, ...(subscript ? { subscript } : {}), ...(append ? { append } : {}) };
}

/** A redirection at the scanner (fd number or `{name}` prefix, operator, target); undefined (nothing consumed) otherwise. */
export function readRedirect(p: PartsParser): Redirect | undefined {
  const s: Scanner = p.s;
  const start = s.pos;
  const c = s.peek();
  if (!REDIRECT_START.test(c)) return undefined;
  if (c >= '0' && c <= '9') while (s.peek() >= '0' && s.peek() <= '9') s.next();
  else if (c === '{') {
    s.next();
    while (isNameChar(s.peek())) s.next();
    if (s.peek() !== '}') {
      s.pos = start;
      return undefined;
    }
    s.next();
  }
  const opStart = s.pos;
  let op: string | undefined;
  for (const candidate of REDIRECT_OPS) {
    let matched = true;
    for (let i = 0; i < candidate.length && matched; i++) {
      if (s.peek() !== candidate[i]) matched = false;
      else s.next();
    }
    if (matched) {
      op = candidate;
      break;
    }
    s.pos = opStart;
  }
  // `<(` and `>(` start a process substitution, a word.
  if (op === undefined || ((op === '<' || op === '>') && s.peek() === '(') || (op.startsWith('&') && s.pos - start !== op.length)) {
    s.pos = start;
    return undefined;
  }
  p.skipBlanks();
  const target = p.readWord();
  if (!target) s.fail(`a redirection ${op} has no target`);
  const redirect: Redirect = { op, target };
  if (op === '<<' || op === '<<-') {
    const delimiter = heredocDelimiter(target.raw);
    if (!delimiter) s.fail('a here-document delimiter with a substitution in it');
    p.pendHeredoc({ strip: op === '<<-', ...delimiter }, redirect);
  }
  return redirect;
}

/** An argument of `declare` and kin that assigns, as a word: everything its parts expand is kept. */
export function assignmentWord(assignment: Assignment, raw: string): Word {
  const b = new WordBuilder();
  for (const part of [assignment.value, assignment.subscript, ...(assignment.elements ?? [])]) if (part) b.absorb(part);
  const literal = assignment.elements === undefined && assignment.subscript === undefined && (assignment.value?.literal ?? true);
  if (literal) b.text(`${assignment.name}${assignment.append ? '+=' : '='}${assignment.value?.value ?? ''}`);
  else b.dynamic();
  return { ...b.build(raw), assignment };
}
