import { parseProgram } from './bash/parser.js';
import type { Assignment, Command, Program, Redirect, Word } from './bash/syntax.js';
import { splitWrapper } from './command-wrappers.js';
import { arithRisk, assignmentRisk, isCommandVariable, runtimeCode, type Arg } from './runtime-code.js';
import { shellRedirect, shellWord, type ShellRedirect, type ShellWord } from './shell-words.js';
import { VariableTaint } from './variable-taint.js';

/**
 * One simple command of a command line: what one program run looks like,
 * after wrappers (`sudo`, `env`, `bash -c`, `find -exec`…) are unwrapped.
 */
export interface SimpleCommand {
  /** argv: the command name and its arguments. Empty for a bare assignment (`A=1`) or a part that cannot be judged. */
  words: ShellWord[];
  /** `NAME=value` set for this command (or for the rest of the shell, when `words` is empty or the command is `export`). */
  assignments: string[];
  /** Its redirections, and those of compound commands around it (`{ …; } >file`). */
  redirects: ShellRedirect[];
  /** Why this command cannot be judged with confidence; such a command is never allowed by a rule. */
  uncertain?: string;
  /** What `commandRegex` is matched against: the words (quoted where needed), then the redirections. */
  text: string;
}

/** Bounds that keep a pathological command from costing more than refusing it. */
const MAX_SHELL_DEPTH = 8;
const MAX_WRAPPER_DEPTH = 16;
const MAX_COMMANDS = 10_000;

function quote(word: ShellWord): string {
  return word.literal && word.text !== '' && /^[\w@%+=:,./-]+$/u.test(word.text)
    ? word.text
    : word.literal
      ? `'${word.text.replace(/'/gu, `'\\''`)}'`
      : word.text;
}

function commandText(words: readonly ShellWord[], redirects: readonly ShellRedirect[]): string {
  return [...words.map(quote), ...redirects.map((r) => `${r.op} ${quote(r.target)}`)].join(' ');
}

interface Context {
  out: SimpleCommand[];
  taint: VariableTaint;
}

/** What compound commands and wrappers around a command carry down to it. */
interface Carried {
  redirects: ShellRedirect[];
  assignments: string[];
}

const FRESH: Carried = { redirects: [], assignments: [] };

function push(ctx: Context, command: SimpleCommand): void {
  if (ctx.out.length > MAX_COMMANDS) return;
  if (ctx.out.length === MAX_COMMANDS) {
    ctx.out.push({ words: [], assignments: [], redirects: [], text: '', uncertain: `more than ${MAX_COMMANDS} commands` });
    return;
  }
  ctx.out.push(command);
}

/** A part of the line that cannot be judged, shown by its source text. */
function cannotJudge(ctx: Context, what: string, reason: string): void {
  push(ctx, { words: [], assignments: [], redirects: [], text: what.length > 200 ? `${what.slice(0, 200)}…` : what, uncertain: reason });
}

function emit(ctx: Context, words: Arg[], carried: Carried, depth: number, uncertain?: string): void {
  let reason = uncertain;
  const name = words[0];
  if (reason === undefined && name !== undefined && !name.literal)
    reason = `the command name ${name.text} is not a fixed word (a variable, substitution or expansion)`;
  for (const assignment of carried.assignments) reason ??= assignmentRisk(assignment);
  if (reason === undefined && name !== undefined) {
    const runtime = runtimeCode(words, ctx.taint);
    reason = runtime.uncertain;
    for (const word of runtime.evaluated) walkWord(ctx, word, depth);
    // `eval 'code'`, `trap 'code' EXIT` do nothing but run the code: judged by it, as `bash -c` is.
    if (runtime.code !== undefined) return walkCode(ctx, words, runtime.code, carried, depth, 'bash');
  }
  const plain: ShellWord[] = words.map((word) => ({ text: word.text, literal: word.literal }));
  push(ctx, {
    words: plain,
    assignments: carried.assignments,
    redirects: carried.redirects,
    text: commandText(plain, carried.redirects),
    ...(reason !== undefined ? { uncertain: reason } : {}),
  });
}

/** Emits a command, unwrapping wrappers (and parsing `bash -c` code) down to what actually runs. */
function emitUnwrapped(ctx: Context, words: Arg[], carried: Carried, depth: number, wrapperDepth = 0): void {
  if (wrapperDepth > MAX_WRAPPER_DEPTH) return emit(ctx, words, carried, depth, 'wrappers are nested too deeply');
  const split = words.length > 0 ? splitWrapper(words) : undefined;
  if (!split) return emit(ctx, words, carried, depth);
  const inner: Carried = { redirects: carried.redirects, assignments: [...carried.assignments, ...split.assignments] };
  walkWrapperAssignments(ctx, split.assignments, depth);
  if (split.checked || (split.inner.length === 0 && split.code === undefined) || split.uncertain) emit(ctx, words, carried, depth, split.uncertain);
  for (const command of split.inner) {
    if (
      split.appendsWords &&
      (splitWrapper(command) !== undefined || command.length === 0 || !command[0]!.literal || runtimeCode(command, ctx.taint).code !== undefined)
    )
      emit(ctx, command, inner, depth, `${words[0]!.text} adds words from its input to ${command[0]?.text ?? 'a command'}, which runs other commands`);
    emitUnwrapped(ctx, command, inner, depth, wrapperDepth + 1);
  }
  if (split.code !== undefined) {
    if (!split.code.literal) emit(ctx, words, carried, depth, `the code given to ${words[0]!.text} is not a fixed string`);
    else walkCode(ctx, words, split.code.text, inner, depth, split.codeShell ?? 'bash');
  }
}

/**
 * Code a command runs (`bash -c`, `eval`, `trap`): parsed and judged like
 * the line itself. Code for `sh` (dash on Debian) is parsed as bash only
 * when it uses nothing that dash reads differently; other shells' code is
 * parsed for deny rules but never trusted.
 */
function walkCode(ctx: Context, words: Arg[], code: string, carried: Carried, depth: number, shell: 'bash' | 'sh' | 'other'): void {
  if (depth >= MAX_SHELL_DEPTH) return emit(ctx, words, carried, depth, 'shells are nested too deeply');
  if (shell === 'other') cannotJudge(ctx, code, `${words[0]!.text} is not bash; its code is read as bash only to find denied commands`);
  else if (shell === 'sh' && BASH_ONLY.test(code)) cannotJudge(ctx, code, `${words[0]!.text} is not bash (dash reads this code differently)`);
  walkSource(ctx, code, carried, depth + 1);
}

/** Syntax that dash (Debian's sh) reads otherwise than bash: quoting, redirections, keywords, expansions. */
const BASH_ONLY = /\$'|\$"|<<<|\[\[|\(\(|[<>]\(|\|&|&>|;;&|;&|\bfunction\b|\bcoproc\b|\bselect\b|\$\{[^}]*[/^,:@]|[a-zA-Z_]=\(|\{[^}\s]*(?:,|\.\.)[^}\s]*\}/u;

function walkSource(ctx: Context, source: string, carried: Carried, depth: number): void {
  const program = parseProgram(source);
  ctx.taint.collect(program);
  walkProgram(ctx, program, carried, depth);
}

function walkProgram(ctx: Context, program: Program, carried: Carried, depth: number): void {
  for (const problem of program.problems) cannotJudge(ctx, '(unparsed part)', problem);
  for (const command of program.commands) {
    if (ctx.out.length > MAX_COMMANDS) return;
    walkCommand(ctx, command, carried, depth);
  }
}

/** Everything a word's expansion runs or evaluates. */
function walkWord(ctx: Context, word: Word, depth: number): void {
  for (const program of word.programs) walkProgram(ctx, program, FRESH, depth);
  for (const problem of word.problems) cannotJudge(ctx, word.raw, problem);
  for (const arith of word.arith) {
    const risk = arithRisk(arith, ctx.taint);
    if (risk) cannotJudge(ctx, word.raw, risk);
  }
  for (const ref of word.vars)
    if (ref.indirect && ctx.taint.has(ref.name)) cannotJudge(ctx, word.raw, `\${!${ref.name}} expands a variable named by a value that is not known`);
  if (word.assignment) walkAssignment(ctx, word.assignment, depth);
}

function walkAssignment(ctx: Context, assignment: Assignment, depth: number): void {
  for (const part of [assignment.value, assignment.subscript, ...(assignment.elements ?? [])]) if (part) walkWord(ctx, part, depth);
  const risk = assignmentRisk(assignment.raw);
  if (risk) cannotJudge(ctx, assignment.raw, risk);
  if (isCommandVariable(assignment.name)) {
    const value = assignment.value;
    if (assignment.append || assignment.elements || (value && !value.literal))
      cannotJudge(ctx, assignment.raw, `${assignment.name} holds a command that programs run, and its value is not a fixed string`);
    else if (value) walkVariableCommand(ctx, assignment.name, value.value, depth);
  }
}

/** The command a variable such as GIT_PAGER holds, judged as the shell that runs it would read it. */
function walkVariableCommand(ctx: Context, name: string, value: string, depth: number): void {
  if (value.trim() === '') return;
  walkCode(ctx, [{ text: name, literal: true }], value, FRESH, depth, 'sh');
}

/** `env NAME=VALUE …`, `sudo NAME=VALUE …`: the wrapper's assignments that hold commands. */
function walkWrapperAssignments(ctx: Context, assignments: readonly string[], depth: number): void {
  for (const assignment of assignments) {
    const at = assignment.indexOf('=');
    const name = assignment.slice(0, at);
    if (isCommandVariable(name)) walkVariableCommand(ctx, name, assignment.slice(at + 1), depth);
  }
}

function walkRedirects(ctx: Context, redirects: readonly Redirect[], depth: number): ShellRedirect[] {
  for (const redirect of redirects) {
    walkWord(ctx, redirect.target, depth);
    if (redirect.heredoc) walkWord(ctx, redirect.heredoc.body, depth);
  }
  return redirects.map(shellRedirect);
}

function walkCommand(ctx: Context, command: Command, carried: Carried, depth: number): void {
  switch (command.type) {
    case 'simple': {
      const redirects = [...walkRedirects(ctx, command.redirects, depth), ...carried.redirects];
      for (const assignment of command.assignments) walkAssignment(ctx, assignment, depth);
      for (const word of command.words) walkWord(ctx, word, depth);
      const assignments = [...carried.assignments, ...command.assignments.map((a) => a.raw)];
      const words: Arg[] = command.words.map((word) => ({ text: word.value, literal: word.literal, word }));
      // `>file` alone truncates a file, `A=1` alone sets a variable: commands with no words, judged by those.
      if (words.length === 0) return emit(ctx, [], { redirects, assignments }, depth);
      for (const word of command.words) if (word.assignment) assignments.push(word.assignment.raw);
      return emitUnwrapped(ctx, words, { redirects, assignments }, depth);
    }
    case 'compound': {
      const redirects = [...walkRedirects(ctx, command.redirects, depth), ...carried.redirects];
      for (const word of command.words) walkWord(ctx, word, depth);
      for (const arith of command.arith) {
        const risk = arithRisk(arith, ctx.taint);
        if (risk) cannotJudge(ctx, command.kind === 'arith' ? (command.words[0]?.raw ?? '((…))') : 'for ((…))', risk);
      }
      for (const word of command.arithWords) walkArithWord(ctx, word, depth);
      for (const body of command.bodies) walkProgram(ctx, body, { redirects, assignments: carried.assignments }, depth);
      return;
    }
    case 'function':
      // The body runs wherever the function is called: judged where it is defined.
      return walkCommand(ctx, command.body, carried, depth);
    case 'coproc':
      return walkCommand(ctx, command.body, carried, depth);
  }
}

/** An operand `[[ ]]` evaluates as arithmetic or as a variable name (`-eq`, `-v`). */
function walkArithWord(ctx: Context, word: Word, depth: number): void {
  if (word.literal) {
    const scanned = runtimeCode(
      [
        { text: 'let', literal: true },
        { ...shellWord(word), word },
      ],
      ctx.taint,
    );
    for (const evaluated of scanned.evaluated) walkWord(ctx, evaluated, depth);
    if (scanned.uncertain) cannotJudge(ctx, word.raw, scanned.uncertain);
  } else if (word.fromData || word.programs.length > 0 || word.vars.some((v) => ctx.taint.has(v.name))) {
    cannotJudge(ctx, word.raw, `[[ ]] evaluates ${word.raw}, whose value is not known, as arithmetic or a variable name`);
  }
}

/**
 * Splits a command line into the simple commands bash would run, parsed
 * as bash 5.2 parses it (bash/parser.ts): through pipelines, lists,
 * compound commands, function bodies, substitutions, here-documents
 * (their bodies read where bash reads them), `coproc`, and wrappers
 * (`bash -c`, `sudo`, `env`, `xargs`, `find -exec`…). A part the engine
 * cannot be sure of becomes a command marked `uncertain`, never dropped.
 */
export function splitCommand(command: string): SimpleCommand[] {
  const ctx: Context = { out: [], taint: new VariableTaint() };
  walkSource(ctx, command, FRESH, 0);
  // A variable such as GIT_PAGER set by `read`, a loop or `${x:=…}` holds a command the line does not show.
  const setOtherwise = ctx.taint.setOtherwise();
  if (setOtherwise === 'all')
    cannotJudge(ctx, command, 'a variable whose name is data is set, and it may hold a command that programs run (GIT_PAGER, EDITOR…)');
  else
    for (const name of setOtherwise)
      if (isCommandVariable(name)) cannotJudge(ctx, name, `${name} holds a command that programs run, and it is set from a value the line does not show`);
  return ctx.out;
}
