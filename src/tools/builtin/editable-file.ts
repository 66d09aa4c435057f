import { resolve } from 'node:path';
import { ToolErrorType, ToolcellError } from '../../errors.js';
import { looksBinary } from '../../fs/binary-content.js';
import { readConfinedFile } from '../../fs/read-confined.js';
import { decodeText, type TextEncodingName } from '../../fs/text-encoding.js';
import { assertNotToolcellState } from '../../fs/toolcell-state.js';
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
 * MAX_FILE_BYTES). Throws like `resolveWorkspacePath` / `readConfinedFile`,
 * and `toolcell_state_read_only` for a file in toolcell's state folder
 * (checked on the resolved path, so no spelling or symlink gets around it),
 * unless `toolcellState` says toolcell itself is writing its own file.
 */
export async function loadEditableFile(
  workspace: WorkspaceInfo,
  filePath: string,
  signal?: AbortSignal,
  options: { toolcellState?: boolean } = {},
): Promise<EditableFile> {
  const resolved = await resolveWorkspacePath(workspace, filePath);
  if (options.toolcellState !== true) assertNotToolcellState(workspace, resolved.real, filePath);
  else if (resolved.real !== resolve(workspace.roots[0]!, filePath)) {
    // toolcell's own file must be where it says: a state folder (or file) that is a link was planted.
    throw new ToolcellError(
      ToolErrorType.PATH_NOT_IN_WORKSPACE,
      `${filePath}: it is a symbolic link or lies under one; toolcell writes its state only in a plain .toolcell folder.`,
    );
  }
  if (!resolved.exists) return { resolved, text: null, encoding: 'utf8', binary: false };
  const { bytes } = await readConfinedFile(workspace, resolved.real, { maxBytes: MAX_FILE_BYTES, ...(signal ? { signal } : {}) });
  const { text, encoding } = decodeText(bytes);
  return { resolved, text, encoding, binary: looksBinary(bytes) };
}
