import { parse } from 'shell-quote';

/** Operators after which the next word starts a new command. */
const COMMAND_SEPARATORS = new Set(['&&', '||', ';', ';;', '|', '|&', '&', '(', ')']);
/** Redirections: the next word is a file name, not a command. */
const REDIRECTIONS = new Set(['<', '>', '>>', '>&', '<&', '<>', '>|', '&>', '&>>', '<(', '>(']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** Keywords after which a command follows (`if make; then git push; fi`). */
const LEADING_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'time']);
/** Keywords that end a compound command, or start one whose next words are not commands. */
const OTHER_KEYWORDS = new Set(['fi', 'done', 'esac', '}', 'for', 'case', 'select', 'in']);

/**
 * The command names a shell command line runs, in order, without
 * duplicates: `FOO=1 make && git push | tee log` → `make, git, tee`.
 * Commands inside `$( … )` and `( … )` count too. Used to tell people what
 * they approve (`proceed_always` is remembered per root command); the
 * full command is always shown as well. Falls back to the first word when
 * the line cannot be parsed.
 */
export function rootCommands(command: string): string[] {
  let tokens: ReturnType<typeof parse>;
  try {
    // Variables stay as written: `$HOME` must not be expanded from our environment.
    tokens = parse(command, (name) => `$${name}`);
  } catch {
    const first = command.trim().split(/\s+/)[0];
    return first ? [first] : [];
  }
  const roots: string[] = [];
  let expectCommand = true;
  let skipNext = false;
  for (const token of tokens) {
    if (typeof token === 'string') {
      if (skipNext) {
        skipNext = false;
        continue;
      }
      if (!expectCommand || ASSIGNMENT.test(token) || token === '$') continue;
      if (LEADING_KEYWORDS.has(token)) continue;
      if (OTHER_KEYWORDS.has(token)) {
        expectCommand = false;
        continue;
      }
      {
        if (!roots.includes(token)) roots.push(token);
        expectCommand = false;
      }
      continue;
    }
    if ('op' in token) {
      if (COMMAND_SEPARATORS.has(token.op)) expectCommand = true;
      else if (REDIRECTIONS.has(token.op)) skipNext = true;
    }
  }
  return roots;
}
