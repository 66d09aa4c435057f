import { mkdir, writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

export interface OutputLimitOptions {
  /** Outputs longer than this many characters are cut for the model. Default 40,000. */
  maxChars?: number;
  /** Folder where full outputs are saved. Default `<workspace>/.toolcell/tool-outputs`. */
  saveDir: string;
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
  await mkdir(options.saveDir, { recursive: true });
  const safeId = options.callId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  const savedPath = join(options.saveDir, `${safeId}.txt`);
  const temp = `${savedPath}.${process.pid}.tmp`;
  await writeFile(temp, text, { flag: 'wx' });
  await rename(temp, savedPath);

  const headChars = Math.floor(maxChars * 0.2);
  const tailChars = maxChars - headChars;
  const omitted = text.length - headChars - tailChars;
  const cut =
    `${text.slice(0, headChars)}\n\n` +
    `... [${omitted} characters omitted: the output was ${text.length} characters. ` +
    `The full output is saved at ${savedPath}; read it with read_file and a line range.] ...\n\n` +
    text.slice(text.length - tailChars);
  return { text: cut, savedPath };
}
