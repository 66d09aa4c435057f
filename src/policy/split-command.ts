import type { Node, Parser } from 'web-tree-sitter';
import { splitWrapper } from './command-wrappers.js';
import { resolveRedirect, resolveWord, type ShellRedirect, type ShellWord } from './shell-words.js';

/**
 * One simple command of a command line: what one program run looks like,
 * after wrappers (`sudo`, `env`, `bash -c`, `find -exec`…) are unwrapped.
 */
export interface SimpleCommand {
  /** argv: the command name and its arguments. Empty for a bare assignment (`A=1`) or a parse failure. */
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

/** Builtins whose arguments are code bash runs later: nothing can be said about what they run. */
const CODE_RUNNERS = new Set(['eval', 'alias', 'trap']);
const REDIRECT_TYPES = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);
/** Nodes whose commands run as commands of their own (inside words, redirections, heredocs). */
const SUBSTITUTIONS = new Set(['command_substitution', 'process_substitution']);

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
  parser: Parser;
  out: SimpleCommand[];
}

/** What wrappers around a command carry down to it. */
interface Carried {
  redirects: ShellRedirect[];
  assignments: string[];
}

function emit(ctx: Context, words: ShellWord[], carried: Carried, uncertain?: string): void {
  if (ctx.out.length >= MAX_COMMANDS) {
    if (ctx.out.length === MAX_COMMANDS) ctx.out.push({ words: [], assignments: [], redirects: [], text: '', uncertain: `more than ${MAX_COMMANDS} commands` });
    return;
  }
  let reason = uncertain;
  const name = words[0];
  if (reason === undefined && name !== undefined) {
    if (!name.literal) reason = `the command name ${name.text} is not a fixed word (a variable, substitution or expansion)`;
    else if (CODE_RUNNERS.has(name.text)) reason = `${name.text} runs a string as shell code`;
  }
  ctx.out.push({
    words,
    assignments: carried.assignments,
    redirects: carried.redirects,
    text: commandText(words, carried.redirects),
    ...(reason !== undefined ? { uncertain: reason } : {}),
  });
}

/** Emits a command, unwrapping wrappers (and parsing `bash -c` code) down to what actually runs. */
function emitUnwrapped(ctx: Context, words: ShellWord[], carried: Carried, depth: number, wrapperDepth = 0): void {
  if (wrapperDepth > MAX_WRAPPER_DEPTH) return emit(ctx, words, carried, 'wrappers are nested too deeply');
  const split = words.length > 0 ? splitWrapper(words) : undefined;
  if (!split) return emit(ctx, words, carried);
  const inner: Carried = { redirects: carried.redirects, assignments: [...carried.assignments, ...split.assignments] };
  if (split.checked || (split.inner.length === 0 && split.code === undefined) || split.uncertain) emit(ctx, words, carried, split.uncertain);
  for (const command of split.inner) emitUnwrapped(ctx, command, inner, depth, wrapperDepth + 1);
  if (split.code !== undefined) {
    if (!split.code.literal) emit(ctx, words, carried, `the code given to ${words[0]!.text} is not a fixed string`);
    else if (depth >= MAX_SHELL_DEPTH) emit(ctx, words, carried, 'shells are nested too deeply');
    else walkSource(ctx, split.code.text, inner, depth + 1);
  }
}

function parseCommandNode(node: Node): { words: ShellWord[]; assignments: string[]; redirects: ShellRedirect[] } {
  const words: ShellWord[] = [];
  const assignments: string[] = [];
  const redirects: ShellRedirect[] = [];
  for (const child of node.namedChildren) {
    if (child === null) continue;
    if (child.type === 'variable_assignment') assignments.push(child.text);
    else if (REDIRECT_TYPES.has(child.type)) redirects.push(...redirectsOf(child));
    else if (child.type === 'command_name') {
      const parts = child.namedChildren.filter((part): part is Node => part !== null);
      words.unshift(parts.length === 1 ? resolveWord(parts[0]!) : { text: child.text, literal: false });
    } else words.push(resolveWord(child));
  }
  return { words, assignments, redirects };
}

/** A redirection node's redirections: a heredoc's line may carry more (`cat <<EOF >out`). */
function redirectsOf(node: Node): ShellRedirect[] {
  const nested = node.type === 'heredoc_redirect' ? node.namedChildren.filter((c): c is Node => c !== null && c.type === 'file_redirect') : [];
  return [resolveRedirect(node), ...nested.map(resolveRedirect)];
}

/** The keyword of a `declaration_command` (`export`, `declare`, `local`, `readonly`, `typeset`) or `unset`. */
function keywordOf(node: Node): string {
  return node.children.find((c) => c !== null && !c.isNamed)?.text ?? node.type;
}

interface Frame {
  node: Node;
  carried: Carried;
  /** Inside a command's words: only substitutions there are commands of their own. */
  scan: boolean;
}

/** Walks one syntax tree without recursion: a 1 MB `a && a && …` nests 200,000 deep. */
function walkTree(ctx: Context, root: Node, carried: Carried, depth: number): void {
  const stack: Frame[] = [{ node: root, carried, scan: false }];
  const pushChildren = (node: Node, frame: Omit<Frame, 'node'>) => {
    const children = node.namedChildren;
    for (let i = children.length - 1; i >= 0; i--) if (children[i]) stack.push({ node: children[i]!, ...frame });
  };
  const fresh: Carried = { redirects: [], assignments: [] };
  while (stack.length > 0) {
    // Past the bound the line is already uncertain; walking the rest would only cost time.
    if (ctx.out.length > MAX_COMMANDS) return;
    const { node, carried: around, scan } = stack.pop()!;
    if (scan) {
      if (SUBSTITUTIONS.has(node.type)) pushChildren(node, { carried: fresh, scan: false });
      else pushChildren(node, { carried: fresh, scan: true });
      continue;
    }
    switch (node.type) {
      case 'command': {
        const { words, assignments, redirects } = parseCommandNode(node);
        emitUnwrapped(ctx, words, { redirects: [...redirects, ...around.redirects], assignments: [...around.assignments, ...assignments] }, depth);
        pushChildren(node, { carried: fresh, scan: true });
        break;
      }
      case 'redirected_statement': {
        const redirectNodes = node.namedChildren.filter((c): c is Node => c !== null && REDIRECT_TYPES.has(c.type));
        const redirects = [...redirectNodes.flatMap(redirectsOf), ...around.redirects];
        const body = node.childForFieldName('body');
        // `>file` alone truncates a file: a command with no words, judged by its redirection.
        for (const r of redirectNodes) stack.push({ node: r, carried: fresh, scan: true });
        if (body) stack.push({ node: body, carried: { redirects, assignments: around.assignments }, scan: false });
        else emit(ctx, [], { redirects, assignments: around.assignments });
        break;
      }
      case 'declaration_command':
      case 'unset_command': {
        const words: ShellWord[] = [{ text: keywordOf(node), literal: true }];
        const assignments: string[] = [];
        for (const child of node.namedChildren) {
          if (child === null) continue;
          if (child.type === 'variable_assignment') {
            assignments.push(child.text);
            const value = child.childForFieldName('value');
            const name = child.childForFieldName('name')?.text ?? '';
            const resolved = value ? resolveWord(value) : { text: '', literal: true };
            words.push({ text: `${name}=${resolved.text}`, literal: resolved.literal });
          } else words.push(resolveWord(child));
        }
        emit(ctx, words, { redirects: around.redirects, assignments: [...around.assignments, ...assignments] });
        pushChildren(node, { carried: fresh, scan: true });
        break;
      }
      case 'variable_assignment':
      case 'variable_assignments':
        // A bare `PATH=/tmp/x:$PATH` changes what later commands run.
        emit(ctx, [], { redirects: around.redirects, assignments: [...around.assignments, node.text] });
        pushChildren(node, { carried: fresh, scan: true });
        break;
      case 'ERROR':
        emit(ctx, [], around, 'part of the command could not be parsed (unbalanced quotes or brackets?)');
        pushChildren(node, { carried: around, scan: false });
        break;
      default:
        if (SUBSTITUTIONS.has(node.type)) pushChildren(node, { carried: fresh, scan: false });
        else if (REDIRECT_TYPES.has(node.type) || node.type === 'heredoc_body') pushChildren(node, { carried: fresh, scan: true });
        else pushChildren(node, { carried: around, scan: false });
    }
  }
}

function walkSource(ctx: Context, source: string, carried: Carried, depth: number): void {
  const tree = ctx.parser.parse(source);
  if (!tree) return emit(ctx, [], carried, 'the command could not be parsed');
  try {
    // A missing token (an unclosed quote or `$(`) is not an ERROR node; hasError covers both.
    if (tree.rootNode.hasError && !hasErrorNode(tree.rootNode)) emit(ctx, [], carried, 'the command is incomplete (an unclosed quote, bracket or heredoc?)');
    walkTree(ctx, tree.rootNode, carried, depth);
  } finally {
    tree.delete();
  }
}

function hasErrorNode(root: Node): boolean {
  return root.descendantsOfType('ERROR').length > 0;
}

/**
 * Splits a command line into the simple commands bash would run: through
 * pipelines, `&&`, `||`, `;`, newlines, subshells, `{ }`, control flow,
 * function bodies, `$(…)`, backticks, `<(…)`/`>(…)`, heredocs, and
 * wrappers (`bash -c`, `sudo`, `env`, `xargs`, `find -exec`…). A part that
 * cannot be parsed becomes a command marked `uncertain`, never dropped.
 */
export function splitCommand(parser: Parser, command: string): SimpleCommand[] {
  const ctx: Context = { parser, out: [] };
  walkSource(ctx, command, { redirects: [], assignments: [] }, 0);
  return ctx.out;
}
