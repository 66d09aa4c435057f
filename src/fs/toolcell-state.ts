import { sep } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';

/** The name of toolcell's state folder in a workspace (and in any folder that may become one). */
export const STATE_DIR_NAME = '.toolcell';

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/**
 * True when `realPath` lies in toolcell's own state: the configured state
 * folder, or any `.toolcell` folder below a workspace root, in any letter
 * case. A nested one counts because it becomes a workspace's state when a
 * later run names that folder as its workspace (its settings would then
 * start MCP servers on the host); the case because some filesystems ignore it.
 */
export function isToolcellStatePath(workspace: WorkspaceInfo, realPath: string): boolean {
  if (inside(workspace.stateDir, realPath)) return true;
  for (const root of workspace.roots) {
    if (!inside(root, realPath)) continue;
    const below = realPath.slice(root.length).split(sep);
    if (below.some((part) => part.toLowerCase() === STATE_DIR_NAME)) return true;
  }
  return false;
}

/** The refusal of a file tool's write into the state folder. */
export function stateFolderRefusal(displayPath: string): ToolcellError {
  return new ToolcellError(
    ToolErrorType.TOOLCELL_STATE_READ_ONLY,
    `Refusing to change ${displayPath}: it is in toolcell's own state folder (${STATE_DIR_NAME}/), whose settings, saved outputs and logs are toolcell's, not the model's. The file tools may read it but never create or change anything there.`,
  );
}

/** Throws `toolcell_state_read_only` when `realPath` is toolcell's state. */
export function assertNotToolcellState(workspace: WorkspaceInfo, realPath: string, displayPath: string = realPath): void {
  if (isToolcellStatePath(workspace, realPath)) throw stateFolderRefusal(displayPath);
}
