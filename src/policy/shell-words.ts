import type { Redirect, Word } from './bash/syntax.js';

/**
 * One word of a simple command. `literal` is true when the word's value is
 * known exactly before the command runs: no expansion, substitution, glob
 * or brace expansion. Only literal words can match a rule's prefix.
 */
export interface ShellWord {
  /** The value bash passes (quotes and escapes removed); for a word that is not literal, its source text. */
  text: string;
  literal: boolean;
}

/** A redirection of a simple command (or of a compound command around it). */
export interface ShellRedirect {
  /** `>`, `>>`, `&>`, `<`, `<<`, `<<<`, `>&`… */
  op: string;
  /** The file (or fd) as written; the heredoc's delimiter for `<<`. */
  target: ShellWord;
  /** True when it writes a file: not an fd duplicate (`2>&1`) and not `/dev/null`. */
  writes: boolean;
}

const WRITE_OPS = new Set(['>', '>>', '&>', '&>>', '>|', '<>', '>&', '&>|']);

/** A parsed word as the rules see it. */
export function shellWord(word: Word): ShellWord {
  return { text: word.value, literal: word.literal };
}

/** A parsed redirection as the rules see it. */
export function shellRedirect(redirect: Redirect): ShellRedirect {
  const target = shellWord(redirect.target);
  const duplicatesFd = (redirect.op === '>&' || redirect.op === '<&') && target.literal && /^(?:\d+-?|-)$/u.test(target.text);
  const writes = WRITE_OPS.has(redirect.op) && !duplicatesFd && !(target.literal && target.text === '/dev/null');
  return { op: redirect.op, target, writes };
}
