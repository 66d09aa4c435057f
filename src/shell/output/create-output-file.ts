import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
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

/**
 * Creates the file a saved tool output is written to, in the tool-outputs
 * folder (made when missing). The folders are opened one by one without
 * following links, and the file is created in the held folder with
 * O_CREAT|O_EXCL|O_NOFOLLOW: what it returns is a regular file this call
 * made, in the folder the path names, never through something planted. The
 * one place that creates such files in the data plane.
 */
export async function createOutputFile(path: string): Promise<FileHandle> {
  const directory = await openWritableDirectory(WHOLE_TREE, dirname(path), { create: true });
  try {
    return await open(directory.entry(basename(path)), CREATE_FLAGS, 0o666);
  } finally {
    await directory.close();
  }
}

/** How a saved output's file is created (a test may stand in a failing one). */
export type CreateOutputFile = (path: string) => Promise<FileHandle>;
