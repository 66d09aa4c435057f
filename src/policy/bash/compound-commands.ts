import { readArith, type NestedParser } from './expansions.js';
import { BashSyntaxError, NAME, type Scanner } from './scanner.js';
import type { Command, CompoundCommand, Program, Redirect, Word } from './syntax.js';
import type { WordMode } from './words.js';
import { WordBuilder } from './word-builder.js';

/** What compound commands need of the parser (parser.ts's CompoundParser). */
export interface CompoundParser extends NestedParser {
  readonly s: Scanner;
  skipBlanks(): void;
  skipNewlines(): void;
  peekReserved(): string | undefined;
  acceptReserved(word: string): boolean;
  expectReserved(word: string): void;
  parseList(end: { words?: ReadonlySet<string>; paren?: boolean; caseItem?: boolean }): Command[];
  parseRedirects(): Redirect[];
  readWord(mode?: WordMode): Word | undefined;
}

/** Reserved words that start a compound command. */
export const COMPOUND_STARTS: ReadonlySet<string> = new Set(['{', 'if', 'while', 'until', 'for', 'select', 'case', '[[']);

const ARITH_OPERATORS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

function compound(kind: CompoundCommand['kind'], parts: Partial<CompoundCommand>): Omit<CompoundCommand, 'redirects'> {
  return { type: 'compound', kind, bodies: [], words: [], arith: [], arithWords: [], ...parts };
}

function program(commands: Command[]): Program {
  return { commands, problems: [] };
}

/** A compound command at the parser's position, with its redirections; undefined when none starts there. */
export function parseCompound(parser: CompoundParser): Command | undefined {
  parser.skipBlanks();
  const s: Scanner = parser.s;
  let command: Omit<CompoundCommand, 'redirects'> | undefined;
  if (s.peek() === '(') {
    command = s.peek2() === '(' ? (parseArithCommand(parser) ?? parseSubshell(parser)) : parseSubshell(parser);
  } else {
    const word = parser.peekReserved();
    if (word === undefined || !COMPOUND_STARTS.has(word)) return undefined;
    parser.expectReserved(word);
    command = PARSERS[word]!(parser);
  }
  return { ...command, redirects: parser.parseRedirects() };
}

function list(parser: CompoundParser, ...words: string[]): Program {
  return program(parser.parseList({ words: new Set(words) }));
}

function parseSubshell(parser: CompoundParser): Omit<CompoundCommand, 'redirects'> {
  parser.s.next();
  const body = program(parser.parseList({ paren: true }));
  if (parser.s.next() !== ')') parser.s.fail('a subshell is not closed');
  return compound('subshell', { bodies: [body] });
}

/** `(( … ))`; undefined (nothing consumed) when bash would read `( ( … ) … )`. */
function parseArithCommand(parser: CompoundParser): Omit<CompoundCommand, 'redirects'> | undefined {
  const s: Scanner = parser.s;
  const start = s.pos;
  s.next();
  s.next();
  const b = new WordBuilder();
  try {
    readArith(s, b, parser, ')');
    if (s.next() === ')' && s.peek() === ')') {
      s.next();
      return compound('arith', { arith: b.arith, words: [b.build(s.src.slice(start, s.pos))] });
    }
  } catch (error) {
    if (!(error instanceof BashSyntaxError)) throw error;
  }
  s.pos = start;
  return undefined;
}

const PARSERS: Readonly<Record<string, (parser: CompoundParser) => Omit<CompoundCommand, 'redirects'>>> = {
  '{': (parser) => {
    const body = list(parser, '}');
    parser.expectReserved('}');
    return compound('group', { bodies: [body] });
  },
  if: (parser) => {
    const bodies: Program[] = [list(parser, 'then')];
    parser.expectReserved('then');
    bodies.push(list(parser, 'elif', 'else', 'fi'));
    for (;;) {
      if (parser.acceptReserved('elif')) {
        bodies.push(list(parser, 'then'));
        parser.expectReserved('then');
        bodies.push(list(parser, 'elif', 'else', 'fi'));
      } else if (parser.acceptReserved('else')) {
        bodies.push(list(parser, 'fi'));
        parser.expectReserved('fi');
        break;
      } else {
        parser.expectReserved('fi');
        break;
      }
    }
    return compound('if', { bodies });
  },
  while: (parser) => loop(parser, 'while'),
  until: (parser) => loop(parser, 'until'),
  for: (parser) => forLoop(parser, 'for'),
  select: (parser) => forLoop(parser, 'select'),
  case: parseCase,
  '[[': parseCond,
};

function loop(parser: CompoundParser, kind: 'while' | 'until'): Omit<CompoundCommand, 'redirects'> {
  const condition = list(parser, 'do');
  parser.expectReserved('do');
  const body = list(parser, 'done');
  parser.expectReserved('done');
  return compound(kind, { bodies: [condition, body] });
}

/** The body of `for`/`select`: `do … done` or `{ … }`. */
function loopBody(parser: CompoundParser): Program {
  parser.skipNewlines();
  if (parser.acceptReserved('{')) {
    const body = list(parser, '}');
    parser.expectReserved('}');
    return body;
  }
  parser.expectReserved('do');
  const body = list(parser, 'done');
  parser.expectReserved('done');
  return body;
}

function forLoop(parser: CompoundParser, kind: 'for' | 'select'): Omit<CompoundCommand, 'redirects'> {
  const s: Scanner = parser.s;
  parser.skipBlanks();
  if (kind === 'for' && s.peek() === '(' && s.peek2() === '(') {
    s.next();
    s.next();
    const b = new WordBuilder();
    for (const end of [';', ';', ')']) {
      readArith(s, b, parser, end);
      if (s.next() !== end) s.fail('expected ' + end);
    }
    if (s.next() !== ')') s.fail('expected )) in an arithmetic for');
    parser.skipBlanks();
    if (s.peek() === ';') s.next();
    return compound('arith-for', { arith: b.arith, bodies: [loopBody(parser)], words: [b.build('')] });
  }
  const name = parser.readWord();
  if (!name || !name.literal || !NAME.test(name.value)) s.fail(`${kind} needs a variable name`);
  const words: Word[] = [];
  parser.skipBlanks();
  if (s.peek() === ';') s.next();
  parser.skipNewlines();
  if (parser.acceptReserved('in')) {
    for (;;) {
      parser.skipBlanks();
      const c = s.peek();
      if (c === ';' || c === '\n') {
        s.next();
        break;
      }
      const word = parser.readWord();
      if (!word) s.fail(`unexpected ${JSON.stringify(c)} in a ${kind} list`);
      words.push(word);
    }
  }
  return compound(kind, { loopVar: name.value, words, bodies: [loopBody(parser)] });
}

function parseCase(parser: CompoundParser): Omit<CompoundCommand, 'redirects'> {
  const s: Scanner = parser.s;
  parser.skipBlanks();
  const subject = parser.readWord();
  if (!subject) s.fail('case needs a word');
  const words: Word[] = [subject];
  const bodies: Program[] = [];
  parser.skipNewlines();
  parser.expectReserved('in');
  for (;;) {
    parser.skipNewlines();
    if (parser.acceptReserved('esac')) break;
    if (s.peek() === '(') s.next();
    for (;;) {
      parser.skipBlanks();
      const pattern = parser.readWord();
      if (!pattern) s.fail('a case pattern expected');
      words.push(pattern);
      parser.skipBlanks();
      const c = s.next();
      if (c === ')') break;
      if (c !== '|') s.fail('expected | or ) after a case pattern');
    }
    bodies.push(program(parser.parseList({ caseItem: true, words: new Set(['esac']) })));
    parser.skipBlanks();
    if (s.peek() === ';') {
      s.next();
      s.next();
      if (s.peek() === '&') s.next();
    }
  }
  return compound('case', { words, bodies });
}

/** `[[ … ]]`: words and operators up to `]]`; `<`, `>`, `(`, `)`, `&&`, `||` are operators here, not redirections. */
function parseCond(parser: CompoundParser): Omit<CompoundCommand, 'redirects'> {
  const s: Scanner = parser.s;
  const tokens: (Word | string)[] = [];
  for (;;) {
    parser.skipNewlines();
    if (parser.acceptReserved(']]')) break;
    const c = s.peek();
    if (c === '') s.fail('[[ is not closed');
    if ((c === '&' && s.peek2() === '&') || (c === '|' && s.peek2() === '|')) {
      tokens.push(s.next() + s.next());
      continue;
    }
    if (c === '(' || c === ')' || ((c === '<' || c === '>') && s.peek2() !== '(')) {
      tokens.push(s.next());
      continue;
    }
    const last = tokens.at(-1);
    const regex = typeof last === 'object' && last.literal && last.value === '=~';
    const word = parser.readWord(regex ? 'regex' : 'cond');
    if (!word) s.fail(`unexpected ${JSON.stringify(c)} in [[ ]]`);
    tokens.push(word);
  }
  const words = tokens.filter((token): token is Word => typeof token === 'object');
  // Operands bash evaluates as arithmetic (`-eq` and kin) or as a variable name, subscript included (`-v`).
  const arithWords: Word[] = [];
  tokens.forEach((token, i) => {
    if (typeof token !== 'object' || !token.literal) return;
    const near = ARITH_OPERATORS.has(token.value) ? [tokens[i - 1], tokens[i + 1]] : token.value === '-v' ? [tokens[i + 1]] : [];
    for (const operand of near) if (typeof operand === 'object') arithWords.push(operand);
  });
  return compound('cond', { words, arithWords });
}
