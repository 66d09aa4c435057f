/**
 * The syntax tree of a bash command line, as far as the policy engine needs
 * it: which commands run, with which words, assignments and redirections,
 * and what bash evaluates besides (substitutions, arithmetic, variables).
 * Produced by parseBash (parser.ts), which follows bash 5.2's own grammar.
 */

/** A variable an expansion reads (`$x`, `${x:-…}`, a name inside arithmetic). */
export interface VariableRef {
  name: string;
  /** `${!x}`: the value of x names another variable (or an array element, whose subscript bash evaluates). */
  indirect?: boolean;
  /** `${x=…}`, `${x:=…}`: the expansion assigns x. */
  assigns?: boolean;
}

/**
 * Arithmetic bash evaluates: `$(( ))`, `(( ))`, `$[ ]`, a subscript, a
 * substring offset. A variable's value is evaluated as arithmetic in turn,
 * and a subscript in that value runs its command substitutions: so the
 * variables it reads matter, and so do substitutions whose output it evaluates.
 */
export interface Arith {
  vars: string[];
  /** A command substitution's output, or a variable's expansion, is part of the expression text. */
  expandsData: boolean;
}

/** One word: a command name, an argument, a redirection target, a value. */
export interface Word {
  /** The source text. */
  raw: string;
  /** True when the value is known before the command runs: no expansion, substitution, glob or brace expansion. */
  literal: boolean;
  /** The value when literal (quotes and escapes removed); the source text otherwise. */
  value: string;
  /** Commands run while expanding it: `$( )`, backticks, `<( )`, `>( )`. */
  programs: readonly Program[];
  /** Arithmetic evaluated while expanding it. */
  arith: readonly Arith[];
  /** Variables it reads. */
  vars: readonly VariableRef[];
  /** Its value comes from data: a command's output, a file name (glob). */
  fromData: boolean;
  /** Why bash could treat this word otherwise than the parser, or runs code from a value (`${x@P}`). */
  problems: readonly string[];
  /** An argument of `declare`, `export`, `local`, `readonly` or `typeset` that assigns (`export A=1`, `declare -a B=(…)`). */
  assignment?: Assignment;
}

/** `name=value`, `name+=value`, `name[sub]=value`, `name=(a b)`. */
export interface Assignment {
  raw: string;
  name: string;
  /** `name+=value`. */
  append?: boolean;
  value?: Word;
  /** The elements of `name=(…)`. */
  elements?: Word[];
  /** The subscript of `name[sub]=…`, evaluated as arithmetic. */
  subscript?: Word;
}

/** A here-document: its body is read from the lines after the operator's line. */
export interface Heredoc {
  /** The delimiter after quote removal. */
  delimiter: string;
  /** A quoted delimiter makes the body literal; otherwise bash expands it like a double-quoted string. */
  quoted: boolean;
  /** The body; for an unquoted delimiter, with its expansions. */
  body: Word;
}

export interface Redirect {
  /** `>`, `>>`, `<`, `<>`, `>|`, `&>`, `&>>`, `>&`, `<&`, `<<`, `<<-`, `<<<`. */
  op: string;
  /** The file (or fd, or here-string); for a heredoc, its delimiter as written. */
  target: Word;
  heredoc?: Heredoc;
}

export interface SimpleCommand {
  type: 'simple';
  assignments: Assignment[];
  words: Word[];
  redirects: Redirect[];
}

/** A compound command: its lists run as commands; its words and arithmetic are expanded. */
export interface CompoundCommand {
  type: 'compound';
  kind: 'subshell' | 'group' | 'if' | 'while' | 'until' | 'for' | 'select' | 'case' | 'arith' | 'arith-for' | 'cond';
  /** The lists inside (bodies, conditions). */
  bodies: Program[];
  /** Words expanded (a `for` list, a `case` subject and its patterns, `[[ ]]` operands). */
  words: Word[];
  /** `(( ))`, `for (( ))` and the arithmetic operands of `[[ ]]` (`-eq`, `-v`). */
  arith: readonly Arith[];
  /** Words `[[ ]]` evaluates as arithmetic or as a variable name (`-eq` operands, `-v NAME`). */
  arithWords: Word[];
  /** The variable a `for` or `select` sets. */
  loopVar?: string;
  redirects: Redirect[];
}

/** `name() compound` or `function name compound`: the body runs when the function is called. */
export interface FunctionDefinition {
  type: 'function';
  name: Word;
  body: Command;
}

/** `coproc [NAME] command`. */
export interface Coprocess {
  type: 'coproc';
  name?: string;
  body: Command;
}

export type Command = SimpleCommand | CompoundCommand | FunctionDefinition | Coprocess;

/** A list of commands (pipelines, `&&`, `||`, `;`, `&`, newlines): the order does not matter to the policy. */
export interface Program {
  commands: Command[];
  /** Set when bash may read part of it otherwise, or when it could not be parsed. */
  problems: string[];
}
