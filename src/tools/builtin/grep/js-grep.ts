import picomatch from 'picomatch';
import { looksBinary } from '../../../fs/binary-content.js';
import { GitignoreFilter } from '../../../fs/gitignore.js';
import { readConfinedFile } from '../../../fs/read-confined.js';
import { decodeText } from '../../../fs/text-encoding.js';
import { walkFiles } from '../../../fs/walk-files.js';
import { GREP_MAX_FILE_BYTES, type GrepMatch, type GrepOutcome, type GrepRequest } from './grep-types.js';

/**
 * Searches in this thread with a JavaScript RegExp (case-insensitive): a
 * confined walk (.gitignore respected, `.git` skipped, symlinks not
 * followed), each file read through a verified fd; binary files, files over
 * 10 MB and unreadable files are skipped. Always available, so it never
 * returns null.
 */
export async function searchWithJavaScript(request: GrepRequest): Promise<GrepOutcome> {
  const regex = new RegExp(request.pattern, 'i');
  const included = request.include === undefined ? () => true : picomatch(request.include, { dot: true, basename: true });
  const matches: GrepMatch[] = [];
  const files = walkFiles({
    workspace: request.workspace,
    root: request.directory.root,
    start: request.directory.real,
    gitignore: new GitignoreFilter({ workspace: request.workspace, root: request.directory.root }),
    signal: request.signal,
  });
  for await (const file of files) {
    if (!included(file.relativePath)) continue;
    let bytes: Buffer;
    try {
      bytes = (await readConfinedFile(request.workspace, file.path, { maxBytes: GREP_MAX_FILE_BYTES, signal: request.signal })).bytes;
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      continue;
    }
    if (looksBinary(bytes)) continue;
    const lines = decodeText(bytes).text.split('\n');
    for (let index = 0; index < lines.length; index += 1) {
      const text = (lines[index] as string).replace(/\r$/, '');
      if (!regex.test(text)) continue;
      if (matches.length >= request.maxMatches) return { matches, truncated: true };
      matches.push({ file: file.relativePath, line: index + 1, text, ...(file.validName ? {} : { fileNameValid: false }) });
    }
  }
  return { matches, truncated: false };
}
