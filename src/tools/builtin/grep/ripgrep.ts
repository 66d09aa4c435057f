import { findExecutable } from './find-executable.js';
import { GREP_MAX_FILE_BYTES, type GrepMatch, type GrepOutcome, type GrepRequest } from './grep-types.js';
import { runLines } from './run-lines.js';

interface RipgrepText {
  text?: string;
  bytes?: string;
}

interface RipgrepMatchEvent {
  type: string;
  data?: { path?: RipgrepText; lines?: RipgrepText; line_number?: number };
}

/**
 * Searches with ripgrep (`rg --json`) when it is on PATH. Its rules match
 * the JavaScript engine's: hidden files searched, `.git` skipped, .gitignore
 * respected in or out of a git repo, symlinks not followed, binary files and
 * files over 10 MB skipped, case-insensitive. Returns null when rg is
 * missing or rejects the pattern (its regex dialect is Rust's), so the next
 * engine can try.
 */
export async function searchWithRipgrep(request: GrepRequest): Promise<GrepOutcome | null> {
  const rg = await findExecutable('rg');
  if (rg === null) return null;
  const args = ['--json', '--no-config', '--hidden', '--no-require-git', '--ignore-case', '--max-filesize', String(GREP_MAX_FILE_BYTES)];
  args.push('--glob', '!.git');
  if (request.include !== undefined) args.push('--glob', request.include);
  args.push('--regexp', request.pattern, '--', '.');
  const matches: GrepMatch[] = [];
  let truncated = false;
  const result = await runLines(rg, args, {
    cwd: request.directory.real,
    signal: request.signal,
    onLine(line) {
      const match = parseMatch(line);
      if (match === null) return true;
      if (matches.length >= request.maxMatches) {
        truncated = true;
        return false;
      }
      matches.push(match);
      return true;
    },
  });
  if (result === null) return null;
  // Exit 2 is an error; with no matches it is most often a pattern rg cannot parse.
  if (result.code === 2 && matches.length === 0) return null;
  return { matches, truncated };
}

function parseMatch(line: Buffer): GrepMatch | null {
  let event: RipgrepMatchEvent;
  try {
    event = JSON.parse(line.toString('utf8')) as RipgrepMatchEvent;
  } catch {
    return null;
  }
  if (event.type !== 'match' || event.data === undefined) return null;
  const file = textOf(event.data.path);
  const text = textOf(event.data.lines);
  const lineNumber = event.data.line_number;
  if (file === null || text === null || typeof lineNumber !== 'number') return null;
  const match: GrepMatch = { file: file.replace(/^\.\//, ''), line: lineNumber, text: text.replace(/\r?\n$/, '') };
  if (event.data.path?.text === undefined) match.fileNameValid = false;
  return match;
}

/** rg reports non-UTF-8 data as base64 `bytes`; shown lossily. */
function textOf(value: RipgrepText | undefined): string | null {
  if (value?.text !== undefined) return value.text;
  if (value?.bytes !== undefined) return Buffer.from(value.bytes, 'base64').toString('utf8');
  return null;
}
