import { looksBinary } from '../../../fs/binary-content.js';
import { GitignoreFilter } from '../../../fs/gitignore.js';
import { linearGlob } from '../../../fs/linear-glob.js';
import { readConfinedFile } from '../../../fs/read-confined.js';
import { decodeText } from '../../../fs/text-encoding.js';
import { mapAhead } from '../../../fs/map-ahead.js';
import { walkFiles, type WalkedFile } from '../../../fs/walk-files.js';
import { GREP_MAX_FILE_BYTES, type GrepMatch, type GrepOutcome, type GrepRequest } from './grep-types.js';
import type { LineRegex } from './line-regex.js';

/**
 * Files read while the one before is searched: libuv's thread pool has four
 * threads (shared by the process's workers), and each file read waits on it
 * several times. At most this many times GREP_MAX_FILE_BYTES is held.
 */
const READ_AHEAD_FILES = 4;

/**
 * Searches in this thread, line by line and case-insensitively, with the
 * request's compiled RE2 pattern (linear time, line-regex.ts): a confined
 * walk (.gitignore respected, `.git` skipped, symlinks not followed), each
 * file read through a verified fd; binary files, files over 10 MB and
 * unreadable files are skipped. Always available, so it never returns null.
 */
export async function searchWithJavaScript(request: GrepRequest & { regex: LineRegex }): Promise<GrepOutcome> {
  const { regex } = request;
  const included = request.include === undefined ? () => true : linearGlob(request.include, { basename: true });
  const matches: GrepMatch[] = [];
  const files = walkFiles({
    workspace: request.workspace,
    root: request.directory.root,
    start: request.directory.real,
    gitignore: new GitignoreFilter({ workspace: request.workspace, root: request.directory.root }),
    signal: request.signal,
  });
  const read = async (file: WalkedFile): Promise<{ file: WalkedFile; bytes?: Buffer }> => {
    if (!included(file.relativePath)) return { file };
    try {
      return { file, bytes: (await readConfinedFile(request.workspace, file.path, { maxBytes: GREP_MAX_FILE_BYTES, signal: request.signal })).bytes };
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      return { file };
    }
  };
  for await (const { file, bytes } of mapAhead(files, READ_AHEAD_FILES, read)) {
    if (bytes === undefined || looksBinary(bytes)) continue;
    const text = utf8Lines(bytes);
    let truncated = false;
    // Line numbers are counted up to each match only, so a file is walked once.
    let line = 1;
    let counted = 0;
    regex.searchLines(text, (start, end) => {
      if (matches.length >= request.maxMatches) {
        truncated = true;
        return false;
      }
      for (let at = text.indexOf(10, counted); at !== -1 && at < start; at = text.indexOf(10, at + 1)) line++;
      counted = start;
      matches.push({ file: file.relativePath, line, text: text.toString('utf8', start, end), ...(file.validName ? {} : { fileNameValid: false }) });
      return true;
    });
    if (truncated) return { matches, truncated: true };
  }
  return { matches, truncated: false };
}

/** The file as UTF-8 bytes with `\n` line ends (a `\r` before one is dropped, as it is from the lines shown). */
function utf8Lines(bytes: Buffer): Buffer {
  const [b0, b1, b2] = bytes;
  const utf16 = (b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff);
  const utf8 = utf16 ? Buffer.from(decodeText(bytes).text, 'utf8') : b0 === 0xef && b1 === 0xbb && b2 === 0xbf ? bytes.subarray(3) : bytes;
  if (utf8.indexOf('\r\n') === -1) return utf8;
  const out = Buffer.allocUnsafe(utf8.length);
  let size = 0;
  for (let from = 0; from < utf8.length;) {
    const crlf = utf8.indexOf('\r\n', from);
    const stop = crlf === -1 ? utf8.length : crlf;
    size += utf8.copy(out, size, from, stop);
    from = stop + (crlf === -1 ? 0 : 1);
  }
  return out.subarray(0, size);
}
