import type { GrepMatch } from './grep-types.js';

/** Matched lines longer than this are cut for the model. */
export const GREP_MAX_LINE_CHARS = 500;

export interface FormatInput {
  pattern: string;
  /** The searched directory as the model named it (or `.`). */
  where: string;
  include?: string | undefined;
  matches: GrepMatch[];
  truncated: boolean;
}

/**
 * Gemini CLI's grep output: a header, then per file `File: path` and
 * `L<line>: text` lines, files separated by `---`. Files in path order,
 * lines in line order.
 */
export function formatMatches(input: FormatInput): string {
  const filter = input.include ? ` (filter: "${input.include}")` : '';
  if (input.matches.length === 0) return `No matches found for pattern "${input.pattern}" in path "${input.where}"${filter}.`;
  const byFile = new Map<string, GrepMatch[]>();
  for (const match of input.matches) {
    const list = byFile.get(match.file) ?? [];
    list.push(match);
    byFile.set(match.file, list);
  }
  const count = input.matches.length;
  let output = `Found ${count} match${count === 1 ? '' : 'es'} for pattern "${input.pattern}" in path "${input.where}"${filter}`;
  output += input.truncated ? ` (results limited to ${count} matches; narrow the pattern, dir_path or include_pattern for more):\n---\n` : ':\n---\n';
  for (const file of [...byFile.keys()].sort()) {
    const matches = byFile.get(file) ?? [];
    // Same words as list_directory: the model must not try to open a lossy name.
    const invalid = matches.some((match) => match.fileNameValid === false) ? ' (name is not valid UTF-8)' : '';
    output += `File: ${escapeControls(file)}${invalid}\n`;
    for (const match of matches.sort((a, b) => a.line - b.line)) {
      output += `L${match.line}: ${escapeControls(cutLine(match.text.trim()))}\n`;
    }
    output += '---\n';
  }
  return output.trimEnd();
}

function cutLine(text: string): string {
  return text.length <= GREP_MAX_LINE_CHARS ? text : `${text.slice(0, GREP_MAX_LINE_CHARS)}... [truncated]`;
}

/** Names and lines from the search engine may hold terminal escapes (planted files): show them escaped. */
function escapeControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
