import { rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { errorMessage } from '../errors.js';
import { openWritableDirectory } from '../fs/writable-directory.js';
import { shownPath } from '../fs/workspace-paths.js';
import type { SavedOutput } from '../tools/tool.js';

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

/** Where a call's full output is saved: by the scheduler, or by the tool itself as it arrives. */
export function savedOutputPath(saveDir: string, callId: string): string {
  const safeId = callId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  return join(saveDir, `${safeId}.txt`);
}

/**
 * Cuts text over the limit to its head and tail, half the budget each (most
 * tools put the summary at one end or the other), on line boundaries when
 * lines are not too long, and tells the model the size of the whole output
 * and the path of a file holding it, so it can read the middle with
 * read_file. The file is the one the tool saved (`saved`: a command's
 * output, streamed there as it arrived), or else the text itself, saved
 * here.
 */
export async function truncateForModel(
  text: string,
  options: OutputLimitOptions & { callId: string; saved?: SavedOutput },
): Promise<{ text: string; savedPath?: string }> {
  const maxChars = options.maxChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  if (text.length <= maxChars) return { text };
  const { head, tail } = headAndTail(text, maxChars);
  let note: string;
  let savedPath: string | undefined;
  if (options.saved) {
    savedPath = options.saved.path;
    note = `The middle of the output is omitted here: ${toolSavedNote(options.saved, options.workspace)}`;
  } else {
    savedPath = savedOutputPath(options.saveDir, options.callId);
    const omitted = text.slice(head.length, text.length - tail.length);
    note = `${lines(countLines(omitted))} (${omitted.length} characters) omitted here: the output was ${text.length} characters in ${lines(countLines(text))}. `;
    try {
      await saveOutput(options.workspace, options.saveDir, basename(savedPath), text);
      note += `The full output is saved at ${shownPath(options.workspace, savedPath)}; read it with read_file and a line range.`;
    } catch (error) {
      savedPath = undefined;
      note += `The full output could not be saved: ${errorMessage(error)}`;
    }
  }
  const cut = `${head}${head.endsWith('\n') ? '' : '\n'}\n... [${note}] ...\n\n${tail}`;
  return savedPath !== undefined ? { text: cut, savedPath } : { text: cut };
}

/** The whole output's size and where the tool saved it (in the caller's terms). */
function toolSavedNote(saved: SavedOutput, workspace: WorkspaceInfo): string {
  const size = `the whole output was ${saved.bytes} bytes in ${lines(saved.lines)}.`;
  if (saved.path === undefined) return `${size} The full output could not be saved: ${saved.error ?? 'unknown error'}.`;
  const where = shownPath(workspace, saved.path);
  if (saved.cut) {
    return (
      `${size} Its first ${lines(saved.savedLines)} (${saved.savedBytes} bytes) are saved at ${where}, ` +
      'where the size cap for saved outputs stopped it; read them with read_file and a line range.'
    );
  }
  return `${size} The full output is saved at ${where}; read it with read_file and a line range.`;
}

/** Half the budget from the start, half from the end, each cut where a line ends unless that loses over half of it. */
function headAndTail(text: string, maxChars: number): { head: string; tail: string } {
  const headChars = Math.ceil(maxChars / 2);
  const tailChars = maxChars - headChars;
  const lineEnd = text.lastIndexOf('\n', headChars - 1) + 1;
  const head = text.slice(0, lineEnd >= headChars / 2 ? lineEnd : headChars);
  const start = text.length - tailChars;
  const lineStart = text.indexOf('\n', start - 1) + 1;
  const tail = text.slice(lineStart > 0 && text.length - lineStart >= tailChars / 2 ? lineStart : start);
  return { head, tail };
}

function lines(count: number): string {
  return count === 1 ? '1 line' : `${count} lines`;
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let lines = text.endsWith('\n') ? 0 : 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
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
