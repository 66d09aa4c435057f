import { parseArithText } from './bash/parser.js';
import type { Arith, Word } from './bash/syntax.js';
import type { ShellWord } from './shell-words.js';
import type { VariableTaint } from './variable-taint.js';

/** A word of a command as the walker carries it: the rules' view, and the parsed word when there is one. */
export type Arg = ShellWord & { word?: Word };

/** What bash does at run time with a command's words that the split alone does not show. */
export interface RuntimeCode {
  /** Why the command cannot be judged. */
  uncertain?: string;
  /** Code it runs that can be parsed (`eval 'literal'`, `trap 'literal' EXIT`). */
  code?: string;
  /** Words bash evaluates as arithmetic or as a variable name: their substitutions run. */
  evaluated: Word[];
}

/**
 * Variables that make bash (or every program) run code from a value or a
 * file: `BASH_ENV` and `ENV` (read by every non-interactive bash or sh that
 * starts), `PS4` (expanded by `set -x`), `PROMPT_COMMAND` and the prompts,
 * `SHELLOPTS`/`BASHOPTS`/`BASH_COMPAT` (options such as extglob or xtrace,
 * or older parsing rules, for every child bash), exported functions (`BASH_FUNC_name%%`) and the dynamic loader's.
 * Then other programs' settings that run code: git's configuration given in
 * the environment (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` can set
 * `alias.x='!cmd'`) and where its commands come from, the default options of
 * tar (`--to-command`), man (`-P`) and make (`--eval`), less's input filters, and the interpreters' start-up
 * options (`PERL5OPT`/`PERL5DB`, `RUBYOPT`, `NODE_OPTIONS`).
 */
const CODE_VARIABLES =
  /^(?:BASH_ENV|ENV|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS|BASH_COMPAT|BASH_LOADABLES_PATH|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|GCONV_PATH|BASH_FUNC_.*|GIT_CONFIG.*|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|TAR_OPTIONS|MANOPT|MAKEFLAGS|MFLAGS|LESSOPEN|LESSCLOSE|PERL5OPT|PERL5DB|RUBYOPT|NODE_OPTIONS)$/u;

/**
 * Variables whose value is a command that programs run, most through
 * `sh -c` (git's pager and editors, `GIT_EXTERNAL_DIFF`, man's pager, the
 * ask-pass helpers, rsync's remote shell): the value is judged as a
 * command line, so `GIT_PAGER=cat git log` stays as allowed as `cat` and
 * `GIT_PAGER='rm x' git log` is judged as `rm x`.
 */
const COMMAND_VARIABLES =
  /^(?:PAGER|GIT_PAGER|MANPAGER|SYSTEMD_PAGER|EDITOR|VISUAL|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_ASKPASS|GIT_PROXY_COMMAND|SSH_ASKPASS|SUDO_ASKPASS|RSYNC_RSH|RSYNC_CONNECT_PROG|BROWSER)$/u;

/** Whether `name` holds a command other programs run (see COMMAND_VARIABLES). */
export function isCommandVariable(name: string): boolean {
  return COMMAND_VARIABLES.test(name);
}

/** The reason an assignment cannot be judged (`BASH_ENV=x`, `env 'BASH_FUNC_ls%%=() { …; }'`), if any. */
export function assignmentRisk(assignment: string): string | undefined {
  const name = /^[^=[+]*/u.exec(assignment)![0];
  if (CODE_VARIABLES.test(name) || name.includes('%') || name.includes('('))
    return `setting ${name} makes bash or other programs run code the engine cannot see`;
  return undefined;
}

/** Why arithmetic cannot be judged: it evaluates data, or a variable the engine cannot vouch for. */
export function arithRisk(arith: Arith, taint: VariableTaint): string | undefined {
  if (arith.expandsData) return "arithmetic evaluates a substitution's output, and bash runs substitutions in the subscripts it finds there";
  const name = arith.vars.find((v) => taint.has(v));
  return name === undefined
    ? undefined
    : `arithmetic evaluates $${name}, whose value is not known, and bash runs substitutions in the subscripts it finds there`;
}

/** A value that comes from data: a substitution's output, file names, a variable the engine cannot vouch for. */
function fromData(arg: Arg, taint: VariableTaint): boolean {
  if (arg.literal) return false;
  const word = arg.word;
  return !word || word.fromData || word.programs.length > 0 || word.vars.some((v) => taint.has(v.name));
}

/**
 * Options that change how bash reads the lines after them, or run text
 * from the history (`set -o history -H`, then `!!`): `set -euo pipefail`
 * is fine, `set -o posix` or `shopt -s extglob` is not.
 */
const PARSE_OPTIONS = /extglob|expand_aliases|posix|compat|extquote|hist/u;

const NAME_WITH_SUBSCRIPT = /^[A-Za-z_][A-Za-z0-9_]*\[/u;

/** Builtins whose arguments name variables: a subscript in a name is evaluated (`unset 'a[$(rm x)]'` runs rm). */
const NAME_ARGUMENTS = new Set(['unset', 'read', 'printf', 'getopts', 'wait', 'mapfile', 'readarray', 'declare', 'typeset', 'local', 'export', 'readonly']);
const DECLARATIONS = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);

function options(args: readonly Arg[]): string {
  return args
    .filter((arg) => arg.literal && /^[-+][A-Za-z]/u.test(arg.text))
    .map((arg) => arg.text.slice(1))
    .join('');
}

/**
 * What a builtin does with its arguments beyond running itself: code it
 * runs (`eval`, `trap`), files it runs (`source`), definitions that change
 * how later commands are read (`alias`, `hash -p`, `shopt -s extglob`),
 * and arguments it evaluates as arithmetic or variable names.
 */
export function runtimeCode(args: readonly Arg[], taint: VariableTaint): RuntimeCode {
  const name = args[0]?.literal ? args[0].text : '';
  // `eval -- CODE`, `trap -- CODE SIG`: `--` only ends the (absent) options.
  const rest = args[1]?.literal && args[1].text === '--' && (name === 'eval' || name === 'trap') ? args.slice(2) : args.slice(1);
  const none: RuntimeCode = { evaluated: [] };
  const cannot = (uncertain: string): RuntimeCode => ({ uncertain, evaluated: [] });
  switch (name) {
    case 'eval':
      if (rest.every((arg) => arg.literal)) return { code: rest.map((arg) => arg.text).join(' '), evaluated: [] };
      return cannot('eval runs a string that is known only when the command runs');
    case 'source':
    case '.':
      return cannot(`${name} runs the commands of a file the engine cannot see`);
    case 'trap': {
      const first = rest[0];
      if (!first || (first.literal && ['-l', '-p', '-', ''].includes(first.text))) return none;
      if (first.literal) return { code: first.text, evaluated: [] };
      return cannot('trap sets code that is known only when the command runs');
    }
    case 'alias':
      return rest.some((arg) => !arg.literal || arg.text.includes('=')) ? cannot('alias defines code that runs in place of a command') : none;
    case 'hash':
      return options(rest).includes('p') || rest.some((arg) => !arg.literal) ? cannot('hash -p makes a command name run another program') : none;
    case 'enable':
      return options(rest).includes('f') || rest.some((arg) => !arg.literal) ? cannot('enable -f loads a builtin from a file') : none;
    case 'history':
      return rest.length > 0 ? cannot('history can load commands that history expansion then runs') : none;
    case 'compgen':
    case 'bind':
    case 'fc':
      return cannot(`${name} can run commands from strings or the history`);
    case 'shopt':
    case 'set':
      return rest.some((arg) => !arg.literal || PARSE_OPTIONS.test(arg.text) || (name === 'set' && /^[-+][A-Za-z]*H/u.test(arg.text)))
        ? cannot(`${name} may change how bash reads the next lines (extglob, aliases, posix, compatibility levels, history expansion)`)
        : none;
  }
  if (name === 'mapfile' || name === 'readarray') {
    if (options(rest).includes('C')) return cannot(`${name} -C runs a callback string`);
  }
  if (DECLARATIONS.has(name) && /[ni]/u.test(options(rest)))
    return cannot(`${name} -n or -i makes later expansions or assignments evaluate values as names or arithmetic`);
  const evaluated: Word[] = [];
  const evaluate = (arg: Arg, whole: boolean): string | undefined => {
    if (!arg.literal) return fromData(arg, taint) ? `${name} evaluates ${arg.text}, whose value is not known, as a variable name or arithmetic` : undefined;
    if (!whole && !NAME_WITH_SUBSCRIPT.test(arg.text)) return undefined;
    const scanned = parseArithText(whole ? arg.text : arg.text.slice(arg.text.indexOf('[')));
    if (!scanned) return `${name} evaluates ${JSON.stringify(arg.text)} in a way the engine does not follow`;
    evaluated.push(scanned);
    return undefined;
  };
  let uncertain: string | undefined;
  if (name === 'let') for (const arg of rest) uncertain ??= evaluate(arg, true);
  // An assignment argument (`declare a=$(cmd)`) names its variable literally; its subscript and value are walked as words.
  else if (NAME_ARGUMENTS.has(name))
    for (const arg of rest) uncertain ??= (arg.literal && arg.text.startsWith('-')) || arg.word?.assignment ? undefined : evaluate(arg, false);
  else if (name === 'test' || name === '[') {
    rest.forEach((arg, i) => {
      if (i > 0 && rest[i - 1]!.literal && rest[i - 1]!.text === '-v') uncertain ??= evaluate(arg, false) ?? (arg.literal ? undefined : undefined);
    });
  }
  return { ...(uncertain !== undefined ? { uncertain } : {}), evaluated };
}
