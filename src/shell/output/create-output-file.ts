import { constants } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A new file only: never an existing one, never through a symlink (even a dangling one). */
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Creates the file a saved tool output is written to, in the tool-outputs
 * folder (made when missing). O_CREAT|O_EXCL|O_NOFOLLOW: what it returns is
 * a regular file this call made, never a file or link someone planted at
 * the name. The one place that creates such files in the data plane.
 */
export async function createOutputFile(path: string): Promise<FileHandle> {
  await mkdir(dirname(path), { recursive: true });
  return open(path, CREATE_FLAGS, 0o666);
}

/** How a saved output's file is created (a test may stand in a failing one). */
export type CreateOutputFile = (path: string) => Promise<FileHandle>;
