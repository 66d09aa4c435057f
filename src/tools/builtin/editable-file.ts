import { looksBinary } from '../../fs/binary-content.js';
import { readConfinedFile } from '../../fs/read-confined.js';
import { decodeText, type TextEncodingName } from '../../fs/text-encoding.js';
import { resolveWorkspacePath, type ResolvedWorkspacePath } from '../../fs/workspace-paths.js';
import type { WorkspaceInfo } from '../define-tool.js';
import { MAX_FILE_BYTES } from './limits.js';

/** A file an edit tool is about to change: where it is and what it holds now. */
export interface EditableFile {
  resolved: ResolvedWorkspacePath;
  /** Current text, or null when the file does not exist yet. */
  text: string | null;
  /** How to encode the new text so the file keeps its encoding (UTF-8 for new files). */
  encoding: TextEncodingName;
  /** True when the current content looks binary. */
  binary: boolean;
}

/**
 * Resolves and reads the file an edit will change (confined, at most
 * MAX_FILE_BYTES). Throws like `resolveWorkspacePath` / `readConfinedFile`.
 */
export async function loadEditableFile(workspace: WorkspaceInfo, filePath: string, signal?: AbortSignal): Promise<EditableFile> {
  const resolved = await resolveWorkspacePath(workspace, filePath);
  if (!resolved.exists) return { resolved, text: null, encoding: 'utf8', binary: false };
  const { bytes } = await readConfinedFile(workspace, resolved.real, { maxBytes: MAX_FILE_BYTES, ...(signal ? { signal } : {}) });
  const { text, encoding } = decodeText(bytes);
  return { resolved, text, encoding, binary: looksBinary(bytes) };
}
