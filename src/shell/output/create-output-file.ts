import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openWritableDirectory } from '../../fs/writable-directory.js';

/** A new file only: never an existing one, never through a symlink (even a dangling one). */
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Every folder from `/` down: the tool-outputs folder's path is a real path
 * (the workspace root is resolved when the runtime starts, and toolcell makes
 * `.toolcell/tool-outputs` itself), so any link on the way was planted, for
 * instance by a sandboxed command in an enclosing workspace.
 */
const WHOLE_TREE = { roots: ['/'], stateDir: '/' };

/** A file being written under a temporary name, in a folder held open. */
export interface NewOutputFile {
  /** The file, open for writing. */
  handle: FileHandle;
  /** Gives the file its final name in the same held folder, then lets go of the folder (kept on failure, for `discard`). */
  publish(name: string): Promise<void>;
  /** Deletes the file and lets go of the folder. */
  discard(): Promise<void>;
}

/**
 * Creates the file a saved tool output is written to, in the tool-outputs
 * folder (made when missing). The folders are opened one by one without
 * following links, and the file is created in the held folder with
 * O_CREAT|O_EXCL|O_NOFOLLOW. The folder stays held until the file is
 * published or discarded, and both act through it: a command that swaps the
 * folder for a link while its output is written (it can, when it runs in an
 * enclosing workspace) cannot make toolcell rename or delete anything
 * elsewhere. The one place that creates such files in the data plane.
 */
export async function createOutputFile(path: string): Promise<NewOutputFile> {
  const directory = await openWritableDirectory(WHOLE_TREE, dirname(path), { create: true });
  const name = basename(path);
  let handle: FileHandle;
  try {
    handle = await open(directory.entry(name), CREATE_FLAGS, 0o666);
  } catch (error) {
    await directory.close();
    throw error;
  }
  return {
    handle,
    // On failure the folder stays held, so that `discard` can still delete the file through it.
    publish: async (finalName) => {
      await rename(directory.entry(name), directory.entry(finalName));
      await directory.close();
    },
    discard: () => unlink(directory.entry(name)).finally(() => directory.close()),
  };
}

/** How a saved output's file is created (a test may stand in a failing one). */
export type CreateOutputFile = (path: string) => Promise<NewOutputFile>;
