import { posix } from 'node:path';
import picomatch from 'picomatch';
import RE2 from 're2';
import { ToolcellError, ToolErrorType } from '../errors.js';

/**
 * picomatch's guards, in the regular expressions it makes with `dot: true`:
 * a segment is not `.` or `..`, and a `*` that starts a segment matches at
 * least one character. They are lookaheads, which RE2 cannot run; the
 * paths matched here come from walks and directory listings, which never
 * hold a `.` or `..` segment or an empty one, so without them the answer is
 * the same.
 */
const GUARDS = [String.raw`(?!(?:^|\/)\.{1,2}(?:\/|$))`, String.raw`(?!\.{1,2}(?:\/|$))`, String.raw`(?!\.{0,1}(?:\/|$))`, String.raw`(?=.)`];

/** Longest glob accepted: RE2's time is linear in the path, times the size of the pattern. */
export const MAX_GLOB_CHARS = 1000;

export interface GlobOptions {
  /** Letters match either case (the glob tool). */
  nocase?: boolean;
  /** A pattern without `/` matches the path's last segment (grep's include_pattern). */
  basename?: boolean;
}

/**
 * A matcher for `/`-separated relative paths with picomatch's glob syntax
 * (dotfiles match), run by RE2 in time linear in the path. picomatch makes
 * JavaScript regular expressions that backtrack: `*a*a*a*a*a*a*b` against a
 * 60-character name took 10 s, and a name can have 255. picomatch still
 * parses the glob; only the matching moves to RE2. A glob whose meaning
 * needs a lookahead RE2 lacks (an extglob negation `!(…)`) is refused with
 * `unsupported_pattern`; a leading `!` negates the whole pattern, as in
 * picomatch.
 */
export function linearGlob(patterns: string | readonly string[], options: GlobOptions = {}): (path: string) => boolean {
  const matchers = (typeof patterns === 'string' ? [patterns] : patterns).map((pattern) => oneGlob(pattern, options));
  return (path) => matchers.some((matches) => matches(path));
}

function oneGlob(pattern: string, options: GlobOptions): (path: string) => boolean {
  if (pattern.length > MAX_GLOB_CHARS)
    throw new ToolcellError(ToolErrorType.INVALID_TOOL_PARAMS, `The glob is ${pattern.length} characters long; at most ${MAX_GLOB_CHARS} are accepted.`);
  if (pattern.startsWith('!') && !pattern.startsWith('!(')) {
    const rest = oneGlob(pattern.slice(1), options);
    return (path) => !rest(path);
  }
  const made = picomatch.makeRe(pattern, { dot: true, nocase: options.nocase ?? false });
  let source = made.source;
  for (const guard of GUARDS) source = source.split(guard).join('');
  let regex: RE2;
  try {
    regex = new RE2(source, options.nocase ? 'i' : '');
  } catch (error) {
    throw new ToolcellError(
      ToolErrorType.UNSUPPORTED_PATTERN,
      `The glob ${JSON.stringify(pattern)} cannot be matched in linear time (extglob negations such as !(x) are not supported; use a leading ! or an ignore/exclude list): ${(error as Error).message}`,
    );
  }
  const byName = options.basename === true && !pattern.includes('/');
  return (path) => regex.test(byName ? posix.basename(path) : path);
}
