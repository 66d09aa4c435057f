import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { ToolErrorType, ToolcellError, type ErrorCode } from '../errors.js';
import { canResolveOpenFds, fdPath } from '../fs/fd-path.js';
import { describeJsonSyntaxError } from './json-syntax-error.js';

/** Settings files larger than this are refused: real ones are a few KiB, and a bound keeps memory bounded. */
export const MAX_SETTINGS_BYTES = 1024 * 1024;

/**
 * How a settings file may be reached. A workspace's own file (`planted`) is
 * written by whoever controls the workspace, a sandboxed command included:
 * neither it nor its `.toolcell` folder may be a symbolic link. The user's
 * own files may be (dotfiles are often linked).
 */
export type SettingsFileOrigin = 'workspace' | 'user';

/** What kind of file is read, for errors: settings (the default) or policy files share the reader. */
export interface ConfigFileKind {
  code: ErrorCode;
  /** `settings file`, `policy file`. */
  noun: string;
}

const SETTINGS_FILE: ConfigFileKind = { code: ToolErrorType.INVALID_SETTINGS, noun: 'settings file' };

/**
 * Reads a settings file without trusting what is at its path: opened
 * non-blocking (a FIFO cannot hang the run), only a regular file, at most
 * MAX_SETTINGS_BYTES read. Resolves undefined when it does not exist.
 * Errors name the file and the reason, never its content.
 */
export function readSettingsText(file: string, origin: SettingsFileOrigin, kind: ConfigFileKind = SETTINGS_FILE): string | undefined {
  const invalid = (file: string, reason: string, cause?: unknown): ToolcellError =>
    new ToolcellError(kind.code, `Cannot read ${kind.noun} ${file}: ${reason}`, cause === undefined ? undefined : { cause });
  let folder: number | undefined;
  let fd: number | undefined;
  try {
    const flags = constants.O_RDONLY | constants.O_NONBLOCK;
    if (origin === 'workspace' && canResolveOpenFds()) {
      // openat(folder, name) with O_NOFOLLOW on both steps: no symlink at `.toolcell` or the file.
      folder = openSync(dirname(file), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      fd = openSync(`${fdPath(folder)}/${basename(file)}`, flags | constants.O_NOFOLLOW);
    } else {
      fd = openSync(file, flags | (origin === 'workspace' ? constants.O_NOFOLLOW : 0));
    }
  } catch (error) {
    if (folder !== undefined) closeSync(folder);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'ENOTDIR')
      throw invalid(file, `it is a symbolic link or lies under one; a workspace's ${kind.noun}s must be plain files in a plain .toolcell folder`, error);
    throw invalid(file, (error as Error).message, error);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw invalid(file, 'it is not a regular file');
    if (stats.size > MAX_SETTINGS_BYTES) throw invalid(file, `it is ${stats.size} bytes; ${kind.noun}s are at most ${MAX_SETTINGS_BYTES}`);
    const buffer = Buffer.alloc(MAX_SETTINGS_BYTES + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > MAX_SETTINGS_BYTES) throw invalid(file, `it is larger than ${MAX_SETTINGS_BYTES} bytes`);
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
    if (folder !== undefined) closeSync(folder);
  }
}

/**
 * Parses settings JSON. The engine's own message quotes the text around the
 * error, which for a file swapped for a link to a secret would print the
 * secret: the message here says only where the first error is (line and
 * column) and what was expected there.
 */
export function parseSettingsJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ToolcellError(ToolErrorType.INVALID_SETTINGS, `Settings file ${file} is not valid JSON${describeJsonSyntaxError(text)}.`);
  }
}
