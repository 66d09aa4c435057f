import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { assertNotToolcellState } from './toolcell-state.js';
import { giveToOwner, openWritableDirectory } from './writable-directory.js';

export interface AtomicWriteOptions {
  /** Abort before the final rename leaves the old file untouched and no temp file behind. */
  signal?: AbortSignal;
  /** Create missing parent directories (inside the workspace). Default false. */
  createParents?: boolean;
  /** toolcell writes a file of its own state folder (memory, saved outputs); refused otherwise. */
  toolcellState?: boolean;
  /** Permission bits of the new file (e.g. 0o600 for a secret); default: the old file's, or 0o666 less the umask. */
  mode?: number;
}

export interface AtomicWriteResult {
  /** True when no file existed at the path before. */
  created: boolean;
}

const CHUNK_BYTES = 1024 * 1024;
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Replaces the file at `realPath` (from `resolveWorkspacePath(...).real`) with
 * `data`, all or nothing: a temp file is created beside it (O_EXCL|O_NOFOLLOW,
 * so never through a planted symlink), written, fsynced, given the old file's
 * permission bits (and, toolcell being root, its owner and group, or for a
 * new file the workspace's owner: WorkspaceInfo.owner), and renamed over the
 * target. ACL entries of a replaced file are not carried over. rename replaces a symlink at
 * the target instead of following it. Readers see the old content or the new,
 * never a mix; an abort or error before the rename removes the temp file.
 *
 * Throws ToolcellError: `toolcell_state_read_only` (a path in the state
 * folder without `toolcellState`), `path_not_in_workspace`, `target_is_directory`,
 * `file_not_found` (missing parent without `createParents`),
 * `path_is_not_a_directory`; or an AbortError.
 */
export async function writeFileAtomic(
  workspace: WorkspaceInfo,
  realPath: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<AtomicWriteResult> {
  if (typeof realPath !== 'string' || !isAbsolute(realPath)) {
    throw new TypeError('writeFileAtomic: realPath must be an absolute path');
  }
  const { signal } = options;
  signal?.throwIfAborted();
  if (options.toolcellState !== true) assertNotToolcellState(workspace, realPath);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const directory = await openWritableDirectory(workspace, dirname(realPath), { create: options.createParents ?? false });
  const name = basename(realPath);
  const target = directory.entry(name);
  const temp = directory.entry(`.toolcell-${randomBytes(8).toString('hex')}.tmp`);
  let tempCreated = false;
  let renamed = false;
  try {
    const existing = await existingFile(target, realPath);
    const existingMode = existing === undefined ? undefined : existing.mode & 0o7777;
    const mode = options.mode ?? existingMode;
    // An explicit mode is also the create mode, so the file is never more open than asked, not even briefly.
    const handle = await open(temp, TEMP_FLAGS, mode ?? 0o666);
    tempCreated = true;
    try {
      // The replaced file's owner, or for a new one the workspace's (toolcell as root); before the
      // chmod, since a chown clears set-id bits.
      await giveToOwner(handle, existing ?? workspace.owner);
      // The create mode was cut by the umask; the wanted bits are restored exactly.
      if (mode !== undefined) await handle.chmod(mode);
      await writeAll(handle, bytes, signal);
      await handle.sync();
    } finally {
      await handle.close();
    }
    signal?.throwIfAborted();
    await directory.assertStillInside();
    await rename(temp, target);
    renamed = true;
    await directory.sync();
    return { created: existing === undefined };
  } finally {
    if (tempCreated && !renamed) await unlink(temp).catch(() => {});
    await directory.close();
  }
}

/** Mode and owner of the file being replaced; undefined when there is none (or only a symlink). */
async function existingFile(target: string, realPath: string): Promise<{ mode: number; uid: number; gid: number } | undefined> {
  try {
    const stats = await lstat(target);
    if (stats.isDirectory()) {
      throw new ToolcellError(ToolErrorType.PATH_IS_DIRECTORY, `Path is a directory, not a file: ${realPath}`);
    }
    return stats.isFile() ? { mode: stats.mode, uid: stats.uid, gid: stats.gid } : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array, signal: AbortSignal | undefined): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    signal?.throwIfAborted();
    const length = Math.min(CHUNK_BYTES, bytes.length - offset);
    const { bytesWritten } = await handle.write(bytes, offset, length);
    offset += bytesWritten;
  }
}
