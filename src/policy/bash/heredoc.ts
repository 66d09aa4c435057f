import { decodeAnsiC } from './ansi-c.js';

/** A here-document whose operator was read and whose body starts after the line's end. */
export interface PendingHeredoc {
  strip: boolean;
  delimiter: string;
  quoted: boolean;
  /** Filled in when the body is read. */
  body?: string;
}

/**
 * The delimiter bash compares lines with: the word as written, with quote
 * removal only (`E"O"F`, `EOF''`, `\EOF`, `$'EOF'` are all `EOF`), and
 * whether any part was quoted (the body is then literal). Expansions are
 * not performed (`$X` is the two characters `$X`). Undefined when the word
 * holds a substitution, whose quoting bash treats in ways not followed here.
 */
export function heredocDelimiter(raw: string): { delimiter: string; quoted: boolean } | undefined {
  if (/\$\(|\$\{|`/u.test(raw)) return undefined;
  let delimiter = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      if (raw[i + 1] === '\n') {
        i++;
        continue;
      }
      quoted = true;
      delimiter += raw[++i] ?? '';
    } else if (c === "'") {
      const end = raw.indexOf("'", i + 1);
      delimiter += raw.slice(i + 1, end);
      quoted = true;
      i = end;
    } else if (c === '$' && raw[i + 1] === "'") {
      let end = i + 2;
      while (end < raw.length && raw[end] !== "'") end += raw[end] === '\\' ? 2 : 1;
      const decoded = decodeAnsiC(raw.slice(i + 2, end));
      if (decoded === undefined) return undefined;
      delimiter += decoded;
      quoted = true;
      i = end;
    } else if (c === '"' || (c === '$' && raw[i + 1] === '"')) {
      if (c === '$') i++;
      quoted = true;
      for (i++; i < raw.length && raw[i] !== '"'; i++) {
        if (raw[i] === '\\' && raw[i + 1] === '\n') i++;
        else if (raw[i] === '\\' && '$`"\\'.includes(raw[i + 1] ?? 'x')) delimiter += raw[++i];
        else delimiter += raw[i];
      }
    } else delimiter += c;
  }
  return { delimiter, quoted };
}

/**
 * Reads a here-document's body from `src` at `pos` (the start of the line
 * after the operator's line), as bash does: line by line up to a line equal
 * to the delimiter (leading tabs removed for `<<-`), or to the end. For an
 * unquoted delimiter a backslash-newline joins lines before the comparison.
 * Returns the body and the position after the delimiter line; `closedBy`
 * tells whether a line ended it and, in a command substitution, flags a
 * line bash may take as the delimiter followed by `)`.
 */
export function readHeredocLines(src: string, pos: number, heredoc: PendingHeredoc): { body: string; pos: number; delimiterWithParen: boolean } {
  let body = '';
  let delimiterWithParen = false;
  while (pos < src.length) {
    let end = src.indexOf('\n', pos);
    if (end < 0) end = src.length;
    let line = src.slice(pos, end);
    pos = end + 1;
    while (!heredoc.quoted && endsWithContinuation(line) && pos <= src.length) {
      let next = src.indexOf('\n', pos);
      if (next < 0) next = src.length;
      line = line.slice(0, -1) + src.slice(pos, next);
      pos = next + 1;
      if (next === src.length) break;
    }
    const check = heredoc.strip ? line.replace(/^\t+/u, '') : line;
    if (check === heredoc.delimiter) return { body, pos: Math.min(pos, src.length), delimiterWithParen };
    if (check.startsWith(`${heredoc.delimiter})`)) delimiterWithParen = true;
    body += `${check}\n`;
  }
  return { body, pos: src.length, delimiterWithParen };
}

function endsWithContinuation(line: string): boolean {
  let backslashes = 0;
  for (let i = line.length - 1; i >= 0 && line[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 1;
}
