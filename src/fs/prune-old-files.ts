import { lstat, readdir, unlink } from 'node:fs/promises';
import { ToolErrorType, isToolcellError } from '../errors.js';
import { openWritableDirectory } from './writable-directory.js';

/** Every folder from `/` down is opened without following links: the folder's path is real, so a link on the way was planted. */
const WHOLE_TREE = { roots: ['/'], stateDir: '/' };

/**
 * Deletes the regular files in `folder` last modified more than `maxAgeMs`
 * ago; folders, links and anything else are left alone. The folder is opened
 * link-free and every name is acted on through it, so a folder swapped for a
 * link cannot turn the clean-up into deletions elsewhere. A missing folder
 * has nothing to prune. Returns how many files went.
 */
export async function pruneOldFiles(folder: string, options: { maxAgeMs: number; now?: number }): Promise<number> {
  let directory;
  try {
    directory = await openWritableDirectory(WHOLE_TREE, folder, { create: false });
  } catch (error) {
    if (isToolcellError(error) && error.code === ToolErrorType.FILE_NOT_FOUND) return 0;
    throw error;
  }
  const oldest = (options.now ?? Date.now()) - options.maxAgeMs;
  let removed = 0;
  try {
    for (const name of await readdir(directory.entry('.'))) {
      const path = directory.entry(name);
      const stats = await lstat(path).catch(() => undefined);
      if (stats?.isFile() !== true || stats.mtimeMs >= oldest) continue;
      // Gone already (another process pruning the same folder) is as good as deleted.
      if (
        await unlink(path).then(
          () => true,
          () => false,
        )
      )
        removed += 1;
    }
  } finally {
    await directory.close();
  }
  return removed;
}
