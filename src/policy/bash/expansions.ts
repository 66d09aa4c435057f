import { decodeAnsiC } from './ansi-c.js';
import { isNameChar, isNameStart, oneOf, type Scanner } from './scanner.js';
import type { Program, VariableRef } from './syntax.js';
import { WordBuilder } from './word-builder.js';

/** How the word readers parse the commands inside a substitution (parser.ts provides it). */
export interface NestedParser {
  /** Parses commands up to the `)` that closes `$(`, `<(` or `>(`, and consumes it. */
  untilParen(s: Scanner): Program;
  /** Parses a separate text: a backtick substitution's body, which bash parses when it runs. */
  source(text: string): Program;
}

/** Characters with no special meaning inside double quotes. */
const DOUBLE_RUN = /[^"\\$`]+/uy;

/** Special parameters: `$@ $* $# $? $- $$ $! $0`. */
const SPECIAL = new Set(['@', '*', '#', '?', '-', '$', '!', '0']);

/** `'…'`: after the opening quote; the text up to the closing one. */
export function readSingle(s: Scanner, b: WordBuilder): void {
  const end = s.src.indexOf("'", s.pos);
  if (end < 0) s.fail('a single quote is not closed');
  b.text(s.src.slice(s.pos, end));
  s.pos = end + 1;
}

/** `"…"`: after the opening quote, up to and including the closing one. */
export function readDouble(s: Scanner, b: WordBuilder, p: NestedParser): void {
  s.enter();
  for (;;) {
    const c = s.peek();
    if (c === '') s.fail('a double quote is not closed');
    if (c === '"') {
      s.next();
      break;
    }
    DOUBLE_RUN.lastIndex = s.pos;
    const run = DOUBLE_RUN.exec(s.src);
    if (run) {
      b.text(run[0]);
      s.pos += run[0].length;
      continue;
    }
    if (c === '\\') {
      s.next();
      const escaped = s.nextRaw();
      b.text('$`"\\'.includes(escaped) && escaped !== '' ? escaped : `\\${escaped}`);
    } else if (c === '$') readDollar(s, b, p, true);
    else if (c === '`') readBacktick(s, b, p, true);
    else b.text(s.next());
  }
  s.leave();
}

/**
 * `` `…` ``: after the opening backtick. Inside, a backslash quotes only
 * `$`, `` ` ``, `\` (and `"` within double quotes); bash parses the rest as
 * a command when it runs the substitution.
 */
export function readBacktick(s: Scanner, b: WordBuilder, p: NestedParser, inDouble: boolean): void {
  s.next();
  let body = '';
  for (;;) {
    const c = s.next();
    if (c === '') s.fail('a backtick substitution is not closed');
    if (c === '`') break;
    if (c === '\\') {
      const escaped = s.nextRaw();
      body += oneOf(escaped, '$`\\') || (inDouble && escaped === '"') ? escaped : `\\${escaped}`;
    } else body += c;
  }
  s.enter();
  b.addPrograms(p.source(body));
  s.leave();
  b.fromData = true;
  b.dynamic();
}

/** `$…`: at the `$`. Inside double quotes (and here-document bodies) `$'` and `$"` are not quotes. */
export function readDollar(s: Scanner, b: WordBuilder, p: NestedParser, inDouble: boolean): void {
  s.next();
  const c = s.peek();
  if (c === "'" && !inDouble) {
    s.next();
    let end = s.pos;
    while (end < s.src.length && s.src[end] !== "'") end += s.src[end] === '\\' ? 2 : 1;
    if (end >= s.src.length) s.fail("a $'…' string is not closed");
    const decoded = decodeAnsiC(s.src.slice(s.pos, end));
    s.pos = end + 1;
    if (decoded === undefined) b.dynamic();
    else b.text(decoded);
  } else if (c === '"' && !inDouble) {
    s.next();
    // bash looks the text up in a message catalogue and then expands the translation.
    b.addProblems('a $"…" string is translated and expanded at run time');
    b.dynamic();
    readDouble(s, b, p);
  } else if (c === '(') {
    b.dynamic();
    if (s.peek2() === '(' && readArithSubstitution(s, b, p)) return;
    s.next();
    s.enter();
    b.addPrograms(p.untilParen(s));
    s.leave();
    b.fromData = true;
  } else if (c === '[') {
    // `$[ … ]`: the old spelling of `$(( … ))`.
    s.next();
    b.dynamic();
    readArith(s, b, p, ']');
    if (s.next() !== ']') s.fail('a $[ arithmetic is not closed');
  } else if (c === '{') {
    s.next();
    b.dynamic();
    readParam(s, b, p, inDouble);
  } else if (isNameStart(c)) {
    let name = '';
    while (isNameChar(s.peek())) name += s.next();
    b.addVars({ name });
    b.dynamic();
  } else if ((c >= '1' && c <= '9') || SPECIAL.has(c)) {
    b.addVars({ name: s.next() });
    b.dynamic();
  } else b.text('$');
}

/** `$(( … ))` at `((`; false (nothing consumed) when bash would read `$( ( … ) … )` instead. */
function readArithSubstitution(s: Scanner, b: WordBuilder, p: NestedParser): boolean {
  const start = s.pos;
  s.next();
  s.next();
  const inner = new WordBuilder();
  try {
    readArith(s, inner, p, ')');
    if (s.next() === ')' && s.peek() === ')') {
      s.next();
      b.absorb(inner);
      return true;
    }
  } catch {
    // Not arithmetic after all: read as a command substitution below.
  }
  s.pos = start;
  return false;
}

/**
 * Reads arithmetic up to one of the `end` characters outside parentheses
 * and brackets (not consumed), or to the end of the text when `untilEnd`. Adds its variables and whether expansions
 * feed the expression to `b.arith`; substitutions inside go to `b.programs`.
 */
export function readArith(s: Scanner, b: WordBuilder, p: NestedParser, end: string, untilEnd = false): void {
  s.enter();
  const inner = new WordBuilder();
  const vars: string[] = [];
  let parens = 0;
  let brackets = 0;
  for (;;) {
    const c = s.peek();
    if (c === '') {
      if (untilEnd && parens === 0 && brackets === 0) break;
      s.fail('arithmetic is not closed');
    }
    if (parens === 0 && brackets === 0 && end.includes(c)) break;
    if (c === '(') parens++;
    else if (c === ')') {
      if (parens === 0) s.fail('unbalanced parenthesis in arithmetic');
      parens--;
    } else if (c === '[') brackets++;
    else if (c === ']') {
      if (brackets === 0) s.fail('unbalanced bracket in arithmetic');
      brackets--;
    }
    if (c === '$') readDollar(s, inner, p, true);
    else if (c === '`') readBacktick(s, inner, p, true);
    else if (c === '"') {
      s.next();
      readDouble(s, inner, p);
    } else if (c === "'") {
      s.next();
      readSingle(s, inner);
    } else if (c === '\\') {
      s.next();
      s.nextRaw();
    } else if (c >= '0' && c <= '9') {
      // A number, in any base: `0x1F`, `16#ff`, `64#a_@`.
      while (/[0-9A-Za-z_#@]/u.test(s.peek())) s.next();
    } else if (isNameStart(c)) {
      let name = '';
      while (isNameChar(s.peek())) name += s.next();
      vars.push(name);
    } else s.next();
  }
  b.addPrograms(...inner.programs);
  b.addProblems(...inner.problems);
  b.addVars(...inner.vars);
  b.addArith({ vars: [...vars, ...inner.vars.map((v) => v.name)], expandsData: inner.programs.length > 0 || inner.fromData }, ...inner.arith);
  s.leave();
}

/** `${ … }`: after the `{`, up to and including the closing `}`. */
function readParam(s: Scanner, b: WordBuilder, p: NestedParser, inDouble: boolean): void {
  s.enter();
  let prefix = '';
  if ((s.peek() === '#' || s.peek() === '!') && s.peek2() !== '}') prefix = s.next();
  let name = '';
  const c = s.peek();
  if (isNameStart(c)) while (isNameChar(s.peek())) name += s.next();
  else if (c >= '0' && c <= '9') while (s.peek() >= '0' && s.peek() <= '9') name += s.next();
  else if (SPECIAL.has(c)) name = s.next();
  else s.fail('bad substitution');
  const ref: VariableRef = prefix === '!' ? { name, indirect: true } : { name };
  b.addVars(ref);
  if (s.peek() === '[') {
    s.next();
    if ((s.peek() === '@' || s.peek() === '*') && s.peek2() === ']') s.next();
    else readArith(s, b, p, ']');
    if (s.next() !== ']') s.fail('a subscript is not closed');
  }
  const op = s.peek();
  if (op === '}') {
    s.next();
  } else if (op === ':' && !oneOf(s.peek2(), '-=?+')) {
    // `${x:offset:length}`: both are arithmetic.
    s.next();
    readArith(s, b, p, ':}');
    if (s.peek() === ':') {
      s.next();
      readArith(s, b, p, '}');
    }
    s.next();
  } else {
    if (op === '=' || (op === ':' && s.peek2() === '=')) ref.assigns = true;
    if (op === '@' && s.peek2() === 'P') b.addProblems('${…@P} expands a value as a prompt, running its command substitutions');
    if (!oneOf(op, '-=?+:#%/^,@') || (prefix === '!' && !oneOf(op, '@*}'))) {
      if (prefix !== '!' || !oneOf(op, '@*')) b.addProblems('an unusual ${…} form');
    }
    readParamOperand(s, b, p, inDouble);
  }
  s.leave();
}

/** The rest of `${name<op>…}` up to the first `}` outside quotes and substitutions. */
function readParamOperand(s: Scanner, b: WordBuilder, p: NestedParser, inDouble: boolean): void {
  for (;;) {
    const c = s.peek();
    if (c === '') s.fail('a ${ is not closed');
    if (c === '}') {
      s.next();
      return;
    }
    if (c === '\\') {
      s.next();
      s.nextRaw();
    } else if (c === "'" && !inDouble) {
      s.next();
      readSingle(s, new WordBuilder());
    } else if (c === "'") {
      // Inside double quotes, single quotes hide a `}` from the match but not a substitution: "${x:-'$(cmd)'}" runs cmd.
      s.next();
      for (;;) {
        const q = s.peek();
        if (q === '') s.fail('a single quote in ${…} is not closed');
        if (q === "'") break;
        if (q === '$') readDollar(s, b, p, true);
        else if (q === '`') readBacktick(s, b, p, true);
        else s.next();
      }
      s.next();
    } else if (c === '"') {
      s.next();
      readDouble(s, b, p);
    } else if (c === '$') readDollar(s, b, p, inDouble);
    else if (c === '`') readBacktick(s, b, p, inDouble);
    else s.next();
  }
}
