import type { Assignment, Command, Program, Word } from './bash/syntax.js';

/**
 * Variables whose value the engine cannot vouch for. Bash evaluates a
 * variable's value as arithmetic wherever arithmetic reads it (`$((x))`,
 * `[[ $x -eq 1 ]]`, a subscript), recursively, and a subscript in that
 * value runs its command substitutions: with x='a[$(rm y)]' (read from a
 * file, or written in the command), `echo $((x))` runs `rm y`. So a command
 * that lets arithmetic (or `${!x}`) read such a variable cannot be judged.
 * The environment the command starts with is the operator's, not tainted.
 */
export class VariableTaint {
  readonly #names = new Set<string>(ALWAYS);
  /** Variables set other than by an assignment (a loop, `read`, `printf -v`, `${x:=…}`): their value is not written in the line. */
  readonly #setOtherwise = new Set<string>();
  #all = false;

  has(name: string): boolean {
    return this.#all || this.#names.has(name) || /^[0-9]+$/u.test(name);
  }

  add(name: string): void {
    this.#names.add(name);
  }

  /** The variables the line sets other than by an assignment, or `all` when it sets one whose name is data (`read "$name"`). */
  setOtherwise(): ReadonlySet<string> | 'all' {
    return this.#all ? 'all' : this.#setOtherwise;
  }

  /** A variable set by other means than an assignment: tainted, and its value not in the line. */
  #setFromData(name: string): void {
    this.add(name);
    this.#setOtherwise.add(name);
  }

  /** A variable of unknown name is set from data (`read "$name"`): every variable is tainted. */
  addAll(): void {
    this.#all = true;
  }

  /** Collects what a program's commands set, nested programs included. */
  collect(program: Program): void {
    for (const command of program.commands) this.#command(command);
  }

  #command(command: Command): void {
    switch (command.type) {
      case 'simple':
        for (const assignment of command.assignments) this.#assignment(assignment);
        for (const word of command.words) this.#word(word);
        for (const redirect of command.redirects) {
          this.#word(redirect.target);
          if (redirect.heredoc) this.#word(redirect.heredoc.body);
        }
        this.#builtin(command.words);
        return;
      case 'compound':
        for (const word of command.words) this.#word(word);
        if (command.loopVar !== undefined) this.#setOtherwise.add(command.loopVar);
        if (command.loopVar !== undefined && command.words.some(tainting)) this.add(command.loopVar);
        if (command.loopVar !== undefined && command.kind === 'select') this.add(command.loopVar);
        for (const body of command.bodies) this.collect(body);
        return;
      case 'function':
      case 'coproc':
        this.#command(command.body);
    }
  }

  #word(word: Word): void {
    for (const ref of word.vars) if (ref.assigns) this.#setFromData(ref.name);
    for (const program of word.programs) this.collect(program);
    if (word.assignment) this.#assignment(word.assignment);
  }

  #assignment(assignment: Assignment): void {
    for (const part of [assignment.value, assignment.subscript, ...(assignment.elements ?? [])]) if (part) this.#word(part);
    if ((assignment.value && tainting(assignment.value)) || assignment.elements?.some(tainting)) this.add(assignment.name);
  }

  /** Builtins that set variables named by their arguments from data. */
  #builtin(words: readonly Word[]): void {
    const name = words[0]?.literal ? words[0].value : undefined;
    if (name === undefined || !SETTERS.has(name)) return;
    for (const word of words.slice(1)) {
      if (!word.literal) this.addAll();
      else for (const part of word.value.split(/[[=]/u)) if (/^[A-Za-z_][A-Za-z0-9_]*$/u.test(part)) this.#setFromData(part);
    }
  }
}

/** Set by bash from data: the last argument, input lines, option arguments, matches, paths. */
const ALWAYS = ['_', 'REPLY', 'MAPFILE', 'OPTARG', 'BASH_REMATCH', 'BASH_ARGV', 'BASH_COMMAND', 'BASH_EXECUTION_STRING', 'DIRSTACK', 'FUNCNAME', '@', '*'];

/** Builtins whose arguments name variables they set from input or data. */
const SETTERS = new Set(['read', 'mapfile', 'readarray', 'printf', 'getopts', 'wait']);

/**
 * Whether a value could hold code for arithmetic: anything but digits and
 * operators when literal (a name chains to another variable's value); for
 * an expansion, anything but `$(( … ))` alone.
 */
function tainting(word: Word): boolean {
  if (word.literal) return /[A-Za-z_$`[]/u.test(word.value);
  return !(/^\$\(\([^]*\)\)$/u.test(word.raw) && word.programs.length === 0);
}
