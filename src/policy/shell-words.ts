import type { Node } from 'web-tree-sitter';

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

/** Unquoted characters that make bash expand a word (globs, brace expansion, a leading tilde). */
function expands(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '*' || c === '?' || c === '[' || (c === '{' && raw !== '{}' && raw !== '{') || (c === '~' && i === 0)) return true;
  }
  return false;
}

/** Removes the backslashes of an unquoted word: `\r\m` runs `rm`; a backslash-newline disappears. */
function unescapeUnquoted(raw: string): string {
  return raw.replace(/\\\n/gu, '').replace(/\\(.)/gsu, '$1');
}

/** Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and backslash-newline are escapes. */
function unescapeDoubleQuoted(raw: string): string {
  return raw.replace(/\\\n/gu, '').replace(/\\([$`"\\])/gu, '$1');
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** Decodes `$'…'` (ANSI-C quoting), or undefined for an escape not decoded here (the word is then not literal). */
function decodeAnsiC(body: string): string | undefined {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = body[++i];
    if (next === undefined) return undefined;
    if (SIMPLE_ESCAPES[next] !== undefined) out += SIMPLE_ESCAPES[next];
    else if (next === 'x' || next === 'u' || next === 'U') {
      const max = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const hex = /^[0-9a-fA-F]+/u.exec(body.slice(i + 1, i + 1 + max))?.[0];
      if (!hex) return undefined;
      out += String.fromCodePoint(parseInt(hex, 16));
      i += hex.length;
    } else if (/[0-7]/u.test(next)) {
      const oct = /^[0-7]{1,3}/u.exec(body.slice(i))![0];
      out += String.fromCharCode(parseInt(oct, 8) & 0xff);
      i += oct.length - 1;
    } else return undefined;
  }
  return out;
}

/** What bash makes of one word node (a command name, an argument, a redirection target). */
export function resolveWord(node: Node): ShellWord {
  const raw = node.text;
  switch (node.type) {
    case 'word':
      return expands(raw) ? { text: raw, literal: false } : { text: unescapeUnquoted(raw), literal: true };
    case 'number':
      return { text: raw, literal: true };
    case 'raw_string':
      return { text: raw.slice(1, -1), literal: true };
    case 'ansi_c_string': {
      const decoded = decodeAnsiC(raw.slice(2, -1));
      return decoded === undefined ? { text: raw, literal: false } : { text: decoded, literal: true };
    }
    case 'string': {
      const dynamic = node.namedChildren.some((child) => child !== null && child.type !== 'string_content');
      return dynamic ? { text: raw, literal: false } : { text: unescapeDoubleQuoted(raw.slice(1, -1)), literal: true };
    }
    case 'concatenation': {
      const parts = node.namedChildren.filter((child): child is Node => child !== null).map(resolveWord);
      // `{rm,-rf}` splits into words only at run time; a concatenation holding braces is not literal.
      const literal = parts.every((part) => part.literal) && !/[{}]/u.test(raw.replace(/'[^']*'|"[^"]*"/gu, ''));
      return literal ? { text: parts.map((part) => part.text).join(''), literal } : { text: raw, literal: false };
    }
    default:
      // Expansions, substitutions, arithmetic, `$"…"`: known only when the command runs.
      return { text: raw, literal: false };
  }
}

/** A `file_redirect`, `heredoc_redirect` or `herestring_redirect` node as a ShellRedirect. */
export function resolveRedirect(node: Node): ShellRedirect {
  const op = node.children.find((child) => child !== null && !child.isNamed)?.text ?? (node.type === 'herestring_redirect' ? '<<<' : '<<');
  const destination = node.childForFieldName('destination') ?? node.namedChildren.find((child) => child !== null && child.type !== 'file_descriptor') ?? null;
  const target: ShellWord = destination ? resolveWord(destination) : { text: '', literal: true };
  const duplicatesFd = (op === '>&' || op === '<&') && (destination?.type === 'number' || target.text === '-');
  const writes = node.type === 'file_redirect' && WRITE_OPS.has(op) && !duplicatesFd && !(target.literal && target.text === '/dev/null');
  return { op, target, writes };
}
