import { constants, type Stats } from 'node:fs';
import { lstat, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { ToolErrorType, ToolcellError } from '../errors.js';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { canResolveOpenFds, openedPathBytes, rootContainingBytes } from './fd-path.js';
import { findContainingRoot } from './workspace-paths.js';

/** An open file or directory that is verified to lie inside the workspace. */
export interface ConfinedHandle {
  handle: FileHandle;
  stats: Stats;
  /** The workspace root it lies in. */
  root: string;
}

/**
 * Opens a regular file for reading, refusing to follow a symlink in the last
 * component (O_NOFOLLOW), then asks the kernel where the opened fd really is
 * and refuses it unless that is inside a workspace root. This closes the
 * check-then-use race: whatever was swapped into the path after
 * `resolveWorkspacePath` checked it, what is read is what was verified.
 *
 * Throws ToolcellError: `path_not_in_workspace`, `file_not_found`,
 * `target_is_directory`, `read_content_failure` (not a regular file),
 * `permission_denied`.
 */
export async function openConfinedFile(workspace: WorkspaceInfo, path: string | Buffer): Promise<ConfinedHandle> {
  // O_NONBLOCK: opening a FIFO must not hang; it has no effect on regular files.
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const opened = await openVerified(workspace, path, flags);
  if (!opened.stats.isFile()) {
    await opened.handle.close();
    if (opened.stats.isDirectory()) {
      throw new ToolcellError(ToolErrorType.PATH_IS_DIRECTORY, `Path is a directory, not a file: ${String(path)}`);
    }
    throw new ToolcellError(ToolErrorType.READ_CONTENT_FAILURE, `Not a regular file: ${String(path)}`);
  }
  return opened;
}

/** Like `openConfinedFile`, for a directory (O_DIRECTORY): list it through `fdPath(handle.fd)`. */
export async function openConfinedDirectory(workspace: WorkspaceInfo, path: string | Buffer): Promise<ConfinedHandle> {
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY;
  return openVerified(workspace, path, flags);
}

async function openVerified(workspace: WorkspaceInfo, path: string | Buffer, flags: number): Promise<ConfinedHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags);
  } catch (error) {
    throw await openError(error, path);
  }
  try {
    const stats = await handle.stat();
    const root = await verifiedRoot(workspace, handle, path, stats);
    return { handle, stats, root };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Where the opened object really is must be inside a root, however the path got there. */
async function verifiedRoot(workspace: WorkspaceInfo, handle: FileHandle, path: string | Buffer, stats: Stats): Promise<string> {
  if (canResolveOpenFds()) {
    const where = await openedPathBytes(handle.fd);
    const root = rootContainingBytes(workspace.roots, where);
    if (root === undefined) throw escaped(path);
    return root;
  }
  // No /proc: re-resolve the path and require it to name the very inode we hold.
  // Narrower than the fd check (a swap-and-swap-back can slip through), so
  // Linux is the platform toolcell promises confinement on.
  const real = await realpath(path, { encoding: 'utf8' });
  const again = await stat(real);
  const root = findContainingRoot(workspace.roots, real);
  if (root === undefined || again.ino !== stats.ino || again.dev !== stats.dev) throw escaped(path);
  return root;
}

function escaped(path: string | Buffer): ToolcellError {
  return new ToolcellError(
    ToolErrorType.PATH_NOT_IN_WORKSPACE,
    `Path is outside the workspace (it changed while being opened, or leads out through a symlink): ${String(path)}`,
  );
}

async function openError(error: unknown, path: string | Buffer): Promise<unknown> {
  const code = (error as NodeJS.ErrnoException).code;
  // With O_DIRECTORY, Linux reports a symlink as ENOTDIR rather than ELOOP.
  if (code === 'ENOTDIR' && (await isSymlink(path))) return escaped(path);
  switch (code) {
    case 'ELOOP':
      // O_NOFOLLOW met a symlink in a path that was resolved to contain none.
      return escaped(path);
    case 'ENOENT':
      return new ToolcellError(ToolErrorType.FILE_NOT_FOUND, `No such file or directory: ${String(path)}`, { cause: error });
    case 'ENOTDIR':
      return new ToolcellError(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Not a directory: ${String(path)}`, { cause: error });
    case 'EACCES':
    case 'EPERM':
      return new ToolcellError(ToolErrorType.PERMISSION_DENIED, `Permission denied: ${String(path)}`, { cause: error });
    default:
      return error;
  }
}

async function isSymlink(path: string | Buffer): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}
