import { looksBinary } from '../../fs/binary-content.js';
import { readConfinedFile } from '../../fs/read-confined.js';
import { decodeText } from '../../fs/text-encoding.js';
import type { WorkspaceInfo } from '../define-tool.js';
import type { Part } from '../tool.js';
import { MAX_FILE_BYTES } from './limits.js';
import { selectLines, type LineWindow } from './text-lines.js';

/** A file prepared for the model: text lines, an inline media part, or a binary file to skip. */
export type FileForModel =
  { kind: 'text'; window: LineWindow } | { kind: 'media'; mimeType: string; part: Part; size: number } | { kind: 'binary'; size: number };

export interface ReadForModelOptions {
  /** Set for images/PDFs (see `inlineMediaType`): the bytes go to the model as inlineData. */
  mediaType?: string | undefined;
  startLine?: number | undefined;
  endLine?: number | undefined;
  signal?: AbortSignal;
}

/**
 * Reads a workspace file (confined, at most MAX_FILE_BYTES) and prepares it
 * for the model. Throws like `readConfinedFile`, and RangeError for a
 * `startLine` past the end.
 */
export async function readFileForModel(workspace: WorkspaceInfo, path: string | Buffer, options: ReadForModelOptions = {}): Promise<FileForModel> {
  const { bytes } = await readConfinedFile(workspace, path, {
    maxBytes: MAX_FILE_BYTES,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (options.mediaType !== undefined) {
    const part: Part = { inlineData: { mimeType: options.mediaType, data: bytes.toString('base64') } };
    return { kind: 'media', mimeType: options.mediaType, part, size: bytes.length };
  }
  if (looksBinary(bytes)) return { kind: 'binary', size: bytes.length };
  const { text } = decodeText(bytes);
  return { kind: 'text', window: selectLines(text, { startLine: options.startLine, endLine: options.endLine }) };
}
