import { lstat, readlink } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';

/** The real location of a path whose last components may not exist yet. */
export interface CanonicalPath {
  /** Absolute path with every existing symlink, `.` and `..` resolved. */
  real: string;
  /** True when `real` exists (as anything but a symlink). */
  exists: boolean;
}

/** Linux's limit on symlinks followed during one lookup (MAXSYMLINKS). */
const MAX_SYMLINKS = 40;

/**
 * `realpath` that also works for paths that do not exist yet: existing
 * components are resolved exactly as the kernel would (symlinks followed,
 * then `..` applied to the resolved directory), missing trailing components
 * are appended as they are. A dangling symlink is resolved to its target, so
 * the caller sees where a write through it would really land.
 *
 * Throws `path_is_not_a_directory` when a file is used as a directory,
 * `file_not_found` for `..` after a missing component, and
 * `path_not_in_workspace` for symlink loops.
 */
export async function canonicalizePath(absolutePath: string): Promise<CanonicalPath> {
  if (!isAbsolute(absolutePath)) throw new TypeError(`canonicalizePath: path must be absolute, got ${absolutePath}`);
  let pending = splitComponents(absolutePath);
  let current: string = sep;
  let symlinks = 0;
  while (pending.length > 0) {
    const component = pending.shift() as string;
    if (component === '..') {
      current = parentOf(current);
      continue;
    }
    const next = join(current, component);
    let stats;
    try {
      stats = await lstat(next);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return missingTail(next, pending);
      if (code === 'ENOTDIR') throw notADirectory(current);
      throw error;
    }
    if (stats.isSymbolicLink()) {
      symlinks += 1;
      if (symlinks > MAX_SYMLINKS) {
        throw new ToolcellError(ToolErrorType.PATH_NOT_IN_WORKSPACE, `Too many levels of symbolic links at ${next}`);
      }
      const target = await readlink(next);
      pending = [...splitComponents(target), ...pending];
      if (isAbsolute(target)) current = sep;
      continue;
    }
    if (!stats.isDirectory() && pending.length > 0) throw notADirectory(next);
    current = next;
  }
  return { real: current, exists: true };
}

/** The rest of a path below a missing directory: nothing there can be a symlink. */
function missingTail(missing: string, rest: string[]): CanonicalPath {
  if (rest.includes('..')) {
    throw new ToolcellError(ToolErrorType.FILE_NOT_FOUND, `No such directory: ${missing}`);
  }
  return { real: rest.length > 0 ? join(missing, ...rest) : missing, exists: false };
}

function splitComponents(path: string): string[] {
  return path.split(sep).filter((part) => part !== '' && part !== '.');
}

function parentOf(path: string): string {
  if (path === sep) return sep;
  const index = path.lastIndexOf(sep);
  return index <= 0 ? sep : path.slice(0, index);
}

function notADirectory(path: string): ToolcellError {
  return new ToolcellError(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Not a directory: ${path}`);
}
