import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { ToolcellError, ToolErrorType } from '../errors.js';

/**
 * Reads a whole input (a file path, or `-` / undefined for stdin) as UTF-8,
 * refusing more than `maxBytes` without buffering the excess.
 */
export async function readInput(source: string | undefined, options: { maxBytes: number; stdin?: Readable }): Promise<string> {
  const fromStdin = source === undefined || source === '-';
  const stdin = options.stdin ?? process.stdin;
  if (fromStdin && (stdin as { isTTY?: boolean }).isTTY) {
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, 'no input: give a FILE, or pipe a JSON array of function calls to stdin');
  }
  const stream = fromStdin ? stdin : createReadStream(source);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      size += buffer.length;
      if (size > options.maxBytes) {
        stream.destroy();
        throw new ToolcellError(ToolErrorType.INVALID_INPUT, `input is larger than ${options.maxBytes} bytes`);
      }
      chunks.push(buffer);
    }
  } catch (error) {
    if (error instanceof ToolcellError) throw error;
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, `cannot read ${fromStdin ? 'stdin' : source}: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}
