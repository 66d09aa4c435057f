import { readdir } from 'node:fs/promises';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { canResolveOpenFds, fdPath } from './fd-path.js';
import { openConfinedDirectory } from './safe-open.js';

/** What a directory entry is, from the directory itself (symlinks are not followed). */
export type DirectoryEntryKind = 'file' | 'directory' | 'symlink' | 'other';

/** One name in a directory. `name` is raw bytes: names need not be valid UTF-8. */
export interface DirectoryEntry {
  name: Buffer;
  kind: DirectoryEntryKind;
}

/**
 * Lists a directory inside the workspace. The directory is opened and
 * verified first (see `openConfinedDirectory`) and listed through its fd, so
 * the listing is of the verified directory even if its path is swapped for a
 * symlink meanwhile. Symlinks inside are reported as `symlink`, never followed.
 */
export async function readConfinedDirectory(workspace: WorkspaceInfo, path: string | Buffer): Promise<DirectoryEntry[]> {
  const { handle } = await openConfinedDirectory(workspace, path);
  try {
    const target = canResolveOpenFds() ? fdPath(handle.fd) : path;
    const dirents = await readdir(target, { withFileTypes: true, encoding: 'buffer' });
    return dirents.map((dirent) => ({
      name: dirent.name,
      kind: dirent.isDirectory() ? 'directory' : dirent.isFile() ? 'file' : dirent.isSymbolicLink() ? 'symlink' : 'other',
    }));
  } finally {
    await handle.close();
  }
}
