import { isUtf8 } from 'node:buffer';
import { findExecutable } from './find-executable.js';
import type { GrepMatch, GrepOutcome, GrepRequest } from './grep-types.js';
import { runLines } from './run-lines.js';

/**
 * The workspace's own .git/config is written by whoever controls the
 * workspace (the model, too: it can write files). Settings that make git run
 * programs are overridden on the command line, which beats repository config;
 * optional locks are off so git does not write the index (no index hooks).
 */
const HARDENING = ['--no-pager', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'core.quotePath=false'];
const GIT_ENV = { GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' };

/**
 * Searches with `git grep` when the directory is inside a git work tree:
 * tracked and untracked files that .gitignore does not exclude, binary files
 * skipped, case-insensitive, Perl-compatible regexes (-P: closest to
 * JavaScript's). Returns null when git is missing, this is not a work tree,
 * or git cannot run the search (e.g. built without PCRE).
 */
export async function searchWithGitGrep(request: GrepRequest): Promise<GrepOutcome | null> {
  const git = await findExecutable('git');
  if (git === null || !(await insideWorkTree(git, request))) return null;
  const args = [...HARDENING, 'grep', '--untracked', '-n', '-z', '-I', '-i', '--no-color', '-P', '-e', request.pattern, '--'];
  if (request.include !== undefined) args.push(request.include);
  const matches: GrepMatch[] = [];
  let truncated = false;
  const result = await runLines(git, args, {
    cwd: request.directory.real,
    signal: request.signal,
    env: GIT_ENV,
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
  // Exit 1 means no matches; anything else but 0 (or an early stop) is a failure.
  if (result === null || (result.code !== 0 && result.code !== 1 && !result.stopped)) return null;
  return { matches, truncated };
}

async function insideWorkTree(git: string, request: GrepRequest): Promise<boolean> {
  let answer = '';
  const result = await runLines(git, [...HARDENING, 'rev-parse', '--is-inside-work-tree'], {
    cwd: request.directory.real,
    signal: request.signal,
    env: GIT_ENV,
    onLine(line) {
      answer = line.toString('utf8').trim();
      return true;
    },
  });
  return result?.code === 0 && answer === 'true';
}

/** With -z: `path NUL line NUL text`. */
function parseMatch(line: Buffer): GrepMatch | null {
  const first = line.indexOf(0);
  const second = first === -1 ? -1 : line.indexOf(0, first + 1);
  if (second === -1) return null;
  const lineNumber = Number(line.subarray(first + 1, second).toString('ascii'));
  if (!Number.isSafeInteger(lineNumber)) return null;
  const name = line.subarray(0, first);
  const match: GrepMatch = { file: name.toString('utf8'), line: lineNumber, text: line.subarray(second + 1).toString('utf8').replace(/\r$/, '') };
  if (!isUtf8(name)) match.fileNameValid = false;
  return match;
}
