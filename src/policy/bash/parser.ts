import { readArith, type NestedParser } from './expansions.js';
import { readHeredocLines, type PendingHeredoc } from './heredoc.js';
import { BashLimitError, BashSyntaxError, MAX_PARSED_COMMANDS, oneOf, Scanner } from './scanner.js';
import type { Assignment, Command, Program, Redirect, Word } from './syntax.js';
import { plainWord, WordBuilder } from './word-builder.js';
import { readHeredocBody, readWord, type WordMode } from './words.js';
import { parseCompound, COMPOUND_STARTS } from './compound-commands.js';
import { assignmentWord, readAssignment, readRedirect } from './assignments-and-redirects.js';

/** Words that end a list inside a compound command; elsewhere in command position they are syntax errors. */
const CLOSERS = new Set(['then', 'else', 'elif', 'fi', 'do', 'done', 'esac', '}']);
/** Characters after which a word has ended. */
const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', ')', '<', '>']);
/** Commands whose `name=(…)` arguments bash parses as array assignments. */
const DECLARATIONS = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);

/** What ends the list being parsed. */
export interface ListEnd {
  /** Reserved words that end it (`fi`, `done`, `}`…). */
  words?: ReadonlySet<string>;
  /** A `)` ends it (subshell, command substitution). */
  paren?: boolean;
  /** `;;`, `;&` and `;;&` end it (a `case` item). */
  caseItem?: boolean;
}

/**
 * A recursive-descent parser for bash 5.2's grammar, one instance per
 * nesting level of command substitution (each has its own pending
 * here-documents, as bash's has). Anything it cannot follow with certainty
 * is a BashSyntaxError or a problem on the word or program.
 */
export class BashParser implements NestedParser {
  readonly s: Scanner;
  readonly problems: string[] = [];
  readonly #pending: { heredoc: PendingHeredoc; redirect: Redirect }[] = [];
  readonly #nested: boolean;

  /** Parses a text found inside another (a backtick substitution): the command limit ends the outer parse too. */
  readonly #inner: boolean;

  constructor(s: Scanner, nested = false, inner = false) {
    this.s = s;
    this.#nested = nested;
    this.#inner = inner;
  }

  untilParen(s: Scanner): Program {
    const inner = new BashParser(s, true);
    const commands = inner.parseList({ paren: true });
    inner.#finishNested();
    if (s.next() !== ')') s.fail('a substitution is not closed');
    return { commands, problems: inner.problems };
  }

  source(text: string): Program {
    return parseProgram(text, { depth: this.s.depth, count: this.s.count });
  }

  /** Top level: complete commands one line at a time, as bash runs them; a syntax error ends the line and everything after it. */
  parseTop(): Program {
    const commands: Command[] = [];
    for (;;) {
      const before = commands.length;
      try {
        this.skipSeparators();
        if (this.s.atEnd()) break;
        commands.push(...this.parseLine());
      } catch (error) {
        if (!(error instanceof BashSyntaxError) || (error instanceof BashLimitError && this.#inner)) throw error;
        commands.length = before;
        this.problems.push(`bash would stop at a syntax error: ${error.message}`);
        break;
      }
    }
    return { commands, problems: this.problems };
  }

  /** One line: and-or lists separated by `;` or `&`, up to a newline. */
  parseLine(): Command[] {
    const commands: Command[] = [];
    for (;;) {
      commands.push(...this.parseAndOr());
      this.skipBlanks();
      const c = this.s.peek();
      if (c === '\n' || c === '') return commands;
      if ((c === ';' && !oneOf(this.s.peek2(), ';&')) || (c === '&' && !oneOf(this.s.peek2(), '&>'))) {
        this.s.next();
        this.skipBlanks();
        if (this.s.peek() === '\n' || this.s.atEnd()) return commands;
        continue;
      }
      this.s.fail(`unexpected ${JSON.stringify(c)}`);
    }
  }

  /** A list inside a compound command or substitution, up to (not including) what `end` names. */
  parseList(end: ListEnd): Command[] {
    const commands: Command[] = [];
    for (;;) {
      this.skipSeparators();
      const c = this.s.peek();
      if (c === '') return commands;
      if (c === ')') {
        if (end.paren) return commands;
        this.s.fail('unexpected )');
      }
      if (c === ';' && oneOf(this.s.peek2(), ';&')) {
        if (end.caseItem) return commands;
        this.s.fail('unexpected ;;');
      }
      const word = this.peekReserved();
      if (word !== undefined && CLOSERS.has(word)) {
        if (end.words?.has(word)) return commands;
        this.s.fail(`unexpected ${word}`);
      }
      commands.push(...this.parseAndOr());
      this.skipBlanks();
      const after = this.s.peek();
      if ((after === ';' && !oneOf(this.s.peek2(), ';&')) || (after === '&' && !oneOf(this.s.peek2(), '&>'))) this.s.next();
      else if (after !== '\n' && after !== ')' && after !== '' && after !== ';' && this.peekReserved() === undefined)
        this.s.fail(`unexpected ${JSON.stringify(after)}`);
    }
  }

  /** Skips blanks, comments and newlines (reading pending here-documents). */
  skipSeparators(): void {
    for (;;) {
      this.skipBlanks();
      if (this.s.peek() !== '\n') return;
      this.newline();
    }
  }

  /** Consumes a newline; the bodies of here-documents opened on the line follow it. */
  newline(): void {
    this.s.next();
    for (const { heredoc, redirect } of this.#pending.splice(0)) {
      const read = readHeredocLines(this.s.src, this.s.pos, heredoc);
      this.s.pos = read.pos;
      if (read.delimiterWithParen && this.#nested) this.problems.push('a here-document line in a command substitution starts with its delimiter and `)`');
      redirect.heredoc = {
        delimiter: heredoc.delimiter,
        quoted: heredoc.quoted,
        body: heredoc.quoted ? plainWord(read.body) : readHeredocBody(read.body, this),
      };
    }
  }

  pendHeredoc(heredoc: PendingHeredoc, redirect: Redirect): void {
    this.#pending.push({ heredoc, redirect });
  }

  #finishNested(): void {
    if (this.#pending.length > 0) this.problems.push('a here-document in a command substitution has no body before the substitution ends');
  }

  skipBlanks(): void {
    for (;;) {
      const c = this.s.peek();
      if (c === ' ' || c === '\t') this.s.next();
      else if (c === '#') {
        // A comment runs to the end of the line; a backslash there does not continue it.
        const end = this.s.src.indexOf('\n', this.s.pos);
        this.s.pos = end < 0 ? this.s.src.length : end;
      } else return;
    }
  }

  /** Skips blanks and newlines (after `|`, `&&`, `||`, where a command must follow). */
  skipNewlines(): void {
    this.skipSeparators();
  }

  /** The next word when it is an unquoted reserved-word candidate (no quoting, no expansion), without consuming it. */
  peekReserved(): string | undefined {
    const start = this.s.pos;
    let text = '';
    while (/[a-z{}!\][]/u.test(this.s.peek())) text += this.s.next();
    const c = this.s.peek();
    const ends = c === '' || c === ' ' || c === '\t' || c === '\n' || c === ';' || c === '&' || c === '|' || c === ')' || c === '<' || c === '>' || c === '(';
    this.s.pos = start;
    return text !== '' && ends ? text : undefined;
  }

  /** Consumes the reserved word `word` when it is next. */
  acceptReserved(word: string): boolean {
    this.skipBlanks();
    if (this.peekReserved() !== word) return false;
    for (let i = 0; i < word.length; i++) this.s.next();
    return true;
  }

  expectReserved(word: string): void {
    if (!this.acceptReserved(word)) this.s.fail(`expected ${word}`);
  }

  /** Consumes `text` when it is the next word, unquoted and whole. */
  #acceptPlainWord(text: string): void {
    this.skipBlanks();
    const start = this.s.pos;
    for (const c of text) {
      if (this.s.peek() !== c) {
        this.s.pos = start;
        return;
      }
      this.s.next();
    }
    const after = this.s.peek();
    if (after !== '' && !WORD_END.has(after)) this.s.pos = start;
  }

  parseAndOr(): Command[] {
    const commands = this.parsePipeline();
    for (;;) {
      this.skipBlanks();
      const c = this.s.peek();
      if (!((c === '&' && this.s.peek2() === '&') || (c === '|' && this.s.peek2() === '|'))) return commands;
      this.s.next();
      this.s.next();
      this.skipNewlines();
      commands.push(...this.parsePipeline());
    }
  }

  parsePipeline(): Command[] {
    this.skipBlanks();
    let prefixed = false;
    for (;;) {
      if (this.acceptReserved('!')) {
        prefixed = true;
        continue;
      }
      if (this.acceptReserved('time')) {
        prefixed = true;
        // `time -p` and `time --` (bash's TIMEOPT and TIMEIGN): the keyword's own words, not a command.
        this.#acceptPlainWord('-p');
        this.#acceptPlainWord('--');
        continue;
      }
      break;
    }
    this.skipBlanks();
    const c = this.s.peek();
    // `time` or `!` alone (`! ;`, `time &`) is a valid, empty pipeline.
    if (prefixed && (c === '' || c === '\n' || c === ';' || c === '&' || c === ')')) return [];
    const commands = [...this.parseCommand()];
    for (;;) {
      this.skipBlanks();
      if (this.s.peek() !== '|' || this.s.peek2() === '|') return commands;
      this.s.next();
      if (this.s.peek() === '&') this.s.next();
      this.skipNewlines();
      commands.push(...this.parseCommand());
    }
  }

  /** One command: compound, function definition, coprocess or simple. */
  parseCommand(): Command[] {
    if (++this.s.count.commands > MAX_PARSED_COMMANDS) throw new BashLimitError(`more than ${MAX_PARSED_COMMANDS} commands`);
    this.s.enter();
    try {
      this.skipBlanks();
      const reserved = this.peekReserved();
      if (reserved !== undefined && CLOSERS.has(reserved)) this.s.fail(`unexpected ${reserved}`);
      if (reserved === 'function') return [this.parseFunctionKeyword()];
      if (reserved === 'coproc') return [this.parseCoproc()];
      const compound = parseCompound(this);
      if (compound) return [compound];
      return [this.parseSimple()];
    } finally {
      this.s.leave();
    }
  }

  /** Redirections after a compound command. */
  parseRedirects(): Redirect[] {
    const redirects: Redirect[] = [];
    for (;;) {
      this.skipBlanks();
      const redirect = readRedirect(this);
      if (!redirect) return redirects;
      redirects.push(redirect);
    }
  }

  parseFunctionKeyword(): Command {
    this.expectReserved('function');
    this.skipBlanks();
    const name = this.readWord();
    if (!name) this.s.fail('function name expected');
    this.skipBlanks();
    if (this.s.peek() === '(') {
      // `function f () body`, or `function f ( list )` whose body is a subshell.
      const start = this.s.pos;
      this.s.next();
      this.skipBlanks();
      if (this.s.peek() === ')') this.s.next();
      else this.s.pos = start;
    }
    return { type: 'function', name, body: this.functionBody() };
  }

  functionBody(): Command {
    this.skipNewlines();
    const body = parseCompound(this);
    if (!body) this.s.fail('a function body must be a compound command');
    return body;
  }

  /** `coproc [NAME] compound` or `coproc simple-command`. */
  parseCoproc(): Command {
    this.expectReserved('coproc');
    this.skipBlanks();
    if (this.startsCompound()) return { type: 'coproc', body: parseCompound(this)! };
    const start = this.s.pos;
    // `coproc NAME compound`: NAME is a plain word; `coproc a=(…) cmd` is a simple command with an assignment.
    const assignment = readAssignment(this);
    const name = assignment ? undefined : this.readWord();
    this.skipBlanks();
    if (name && this.startsCompound()) return { type: 'coproc', name: name.value, body: parseCompound(this)! };
    this.s.pos = start;
    return { type: 'coproc', body: this.parseSimple() };
  }

  startsCompound(): boolean {
    const word = this.peekReserved();
    if (word !== undefined && COMPOUND_STARTS.has(word)) return true;
    return this.s.peek() === '(';
  }

  readWord(mode: WordMode = 'normal'): Word | undefined {
    return readWord(this.s, this, mode);
  }

  parseSimple(): Command {
    const assignments: Assignment[] = [];
    const words: Word[] = [];
    const redirects: Redirect[] = [];
    for (;;) {
      this.skipBlanks();
      const redirect = readRedirect(this);
      if (redirect) {
        redirects.push(redirect);
        continue;
      }
      const c = this.s.peek();
      if (c === '' || '\n;&|)'.includes(c)) break;
      if (c === '(') {
        if (words.length === 1 && assignments.length === 0 && redirects.length === 0) {
          this.s.next();
          this.skipBlanks();
          if (this.s.next() !== ')') this.s.fail('expected ) in a function definition');
          return { type: 'function', name: words[0]!, body: this.functionBody() };
        }
        this.s.fail('unexpected (');
      }
      if (words.length === 0) {
        const assignment = readAssignment(this);
        if (assignment) {
          assignments.push(assignment);
          continue;
        }
      } else if (DECLARATIONS.has(words[0]!.value) && words[0]!.literal) {
        const start = this.s.pos;
        const assignment = readAssignment(this);
        if (assignment) {
          words.push(assignmentWord(assignment, this.s.src.slice(start, this.s.pos)));
          continue;
        }
      }
      const word = this.readWord();
      if (!word) this.s.fail(`unexpected ${JSON.stringify(c)}`);
      words.push(word);
    }
    if (words.length === 0 && assignments.length === 0 && redirects.length === 0) this.s.fail(`unexpected ${JSON.stringify(this.s.peek() || 'end')}`);
    return { type: 'simple', assignments, words, redirects };
  }
}

/**
 * A value bash will evaluate as arithmetic when the command runs (an
 * argument of `let`, a name with a subscript given to `unset` or `read`):
 * what it reads and runs. Undefined when it does not scan as arithmetic.
 */
export function parseArithText(text: string): Word | undefined {
  const s = new Scanner(text);
  const b = new WordBuilder();
  try {
    readArith(s, b, new BashParser(s, true), '', true);
  } catch (error) {
    if (error instanceof BashSyntaxError) return undefined;
    throw error;
  }
  b.dynamic();
  return b.build(text);
}

/** Parses a command line (or a backtick substitution's text) as bash 5.2 would. */
export function parseProgram(text: string, within?: { depth: number; count: { commands: number } }): Program {
  const s = new Scanner(text);
  if (within) {
    s.depth = within.depth;
    s.count = within.count;
  }
  return new BashParser(s, false, within !== undefined).parseTop();
}
