import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { errorMessage } from '../errors.js';
import { openWritableDirectory } from '../fs/writable-directory.js';

export interface OutputLimitOptions {
  /** Outputs longer than this many characters are cut for the model. Default 40,000. */
  maxChars?: number;
  /** Folder where full outputs are saved, inside `workspace`: `<workspace>/.toolcell/tool-outputs`. */
  saveDir: string;
  /**
   * The workspace `saveDir` is in. Every folder from its root down is opened
   * without following symbolic links: a nested workspace's `.toolcell` may
   * have been written by a sandboxed command, and a planted
   * `tool-outputs -> /elsewhere` must not become a write there as the host user.
   */
  workspace: WorkspaceInfo;
}

export const DEFAULT_MAX_OUTPUT_CHARS = 40_000;

/**
 * Cuts text over the limit to its head and tail (most tools put the summary
 * at one end or the other) and saves the whole text to a file whose path the
 * model is told, so it can read the middle with read_file if it needs it.
 */
export async function truncateForModel(
  text: string,
  options: OutputLimitOptions & { callId: string },
): Promise<{ text: string; savedPath?: string }> {
  const maxChars = options.maxChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  if (text.length <= maxChars) return { text };
  const safeId = options.callId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  let savedPath: string | undefined = join(options.saveDir, `${safeId}.txt`);
  let saveFailure = '';
  try {
    await saveOutput(options.workspace, options.saveDir, `${safeId}.txt`, text);
  } catch (error) {
    savedPath = undefined;
    saveFailure = errorMessage(error);
  }

  const headChars = Math.floor(maxChars * 0.2);
  const tailChars = maxChars - headChars;
  const omitted = text.length - headChars - tailChars;
  const cut =
    `${text.slice(0, headChars)}\n\n` +
    `... [${omitted} characters omitted: the output was ${text.length} characters. ` +
    (savedPath !== undefined
      ? `The full output is saved at ${savedPath}; read it with read_file and a line range.] ...\n\n`
      : `The full output could not be saved: ${saveFailure}] ...\n\n`) +
    text.slice(text.length - tailChars);
  return savedPath !== undefined ? { text: cut, savedPath } : { text: cut };
}

/**
 * Writes `name` in `saveDir` through a directory opened link-free from the
 * workspace root, as a temp file created exclusively (never through a planted
 * link) and renamed into place.
 */
async function saveOutput(workspace: WorkspaceInfo, saveDir: string, name: string, text: string): Promise<void> {
  const directory = await openWritableDirectory(workspace, saveDir, { create: true });
  try {
    const temp = directory.entry(`.${name}.${process.pid}.tmp`);
    await writeFile(temp, text, { flag: 'wx' });
    await directory.assertStillInside();
    await rename(temp, directory.entry(name));
  } finally {
    await directory.close();
  }
}
