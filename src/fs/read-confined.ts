import { z } from 'zod';
import { parseOptions } from '../contracts/parse-options.js';
import type { FileHandle } from 'node:fs/promises';
import { ToolErrorType, ToolcellError } from '../errors.js';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { openConfinedFile } from './safe-open.js';

/** A whole file read through a verified fd. */
export interface ConfinedFileContent {
  bytes: Buffer;
  /** Permission bits (`mode & 0o7777`), to keep them on rewrite. */
  mode: number;
  /** Last modification time in ms. */
  mtimeMs: number;
  root: string;
}

const readConfinedOptionsSchema = z.strictObject({
  /** Files larger than this fail with `file_too_large` before anything is read. */
  maxBytes: z.number().int().min(0),
  signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
});

export type ReadConfinedOptions = z.input<typeof readConfinedOptionsSchema>;

const CHUNK_BYTES = 1024 * 1024;

/**
 * Reads a whole regular file inside the workspace (see `openConfinedFile` for
 * the checks). The path should come from `resolveWorkspacePath(...).real` or
 * from a confined directory walk.
 *
 * Throws ToolcellError (`file_too_large`, and the `openConfinedFile` codes) or
 * an AbortError when `signal` fires.
 */
export async function readConfinedFile(workspace: WorkspaceInfo, path: string | Buffer, raw: ReadConfinedOptions): Promise<ConfinedFileContent> {
  const options = parseOptions(readConfinedOptionsSchema, raw, 'readConfinedFile');
  const { handle, stats, root } = await openConfinedFile(workspace, path);
  try {
    if (stats.size > options.maxBytes) throw tooLarge(path, stats.size, options.maxBytes);
    const bytes = await readAll(handle, { maxBytes: options.maxBytes, expectedBytes: stats.size }, options.signal);
    if (bytes.length > options.maxBytes) throw tooLarge(path, bytes.length, options.maxBytes);
    return { bytes, mode: stats.mode & 0o7777, mtimeMs: stats.mtimeMs, root };
  } finally {
    await handle.close();
  }
}

/** Smallest read: what a file that grew since its fstat may have gained is found by the next one. */
const MIN_READ_BYTES = 4096;

/**
 * Reads until EOF, but at most `maxBytes + 1` bytes so growth past the limit
 * is seen. Reads are sized by the size fstat gave (plus one byte, to see
 * growth), not a whole chunk each: a search opens thousands of small files,
 * and a 1 MiB buffer for each cost more than its read.
 */
async function readAll(handle: FileHandle, sizes: { maxBytes: number; expectedBytes: number }, signal: AbortSignal | undefined): Promise<Buffer> {
  const { maxBytes, expectedBytes } = sizes;
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const want = Math.min(CHUNK_BYTES, maxBytes + 1 - total, Math.max(MIN_READ_BYTES, expectedBytes + 1 - total));
    if (want <= 0) break;
    const chunk = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(chunk, 0, want, null);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}

function tooLarge(path: string | Buffer, size: number, limit: number): ToolcellError {
  return new ToolcellError(ToolErrorType.FILE_TOO_LARGE, `File is too large (${formatBytes(size)}; the limit is ${formatBytes(limit)}): ${String(path)}`);
}

/** `1.5 MB`-style sizes for messages. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
