import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { canonicalizePath } from './canonical-path.js';

/** A path parameter checked against the workspace roots. */
export interface ResolvedWorkspacePath {
  /** What the caller passed. */
  input: string;
  /** Real absolute path: symlinks, `.` and `..` resolved; missing tail components appended. */
  real: string;
  /** The workspace root that contains `real`. */
  root: string;
  /** False when `real` (or one of its parents) does not exist yet. */
  exists: boolean;
}

/** True when `path` is `root` or below it. Both must be absolute and normalized. */
export function isInsideRoot(root: string, path: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

/** The root (of `roots`) that contains `path`, or undefined. */
export function findContainingRoot(roots: readonly string[], path: string): string | undefined {
  return roots.find((root) => isInsideRoot(root, path));
}

/**
 * The absolute path a path parameter names, without touching the disk:
 * relative paths are taken from the primary root. For display and
 * `locations`; never use it to decide access (see `resolveWorkspacePath`).
 */
export function absoluteWorkspacePath(workspace: WorkspaceInfo, input: string): string {
  const primary = primaryRoot(workspace);
  return isAbsolute(input) ? resolve(input) : resolve(primary, input);
}

/**
 * Checks a path parameter and returns where it really points. Relative paths
 * are taken from the primary root; absolute ones must lie inside one of the
 * roots. The decision is made on the real path (every symlink followed,
 * dangling ones included), so `..`, absolute paths elsewhere and symlinks
 * leading out all fail with `path_not_in_workspace`.
 *
 * This is the check half of check-then-use: open the result with
 * `openConfinedFile`/`openConfinedDirectory` or write it with
 * `writeFileAtomic`, which verify the opened object again.
 *
 * Throws ToolcellError: `invalid_tool_params` (empty path, NUL byte),
 * `path_not_in_workspace`, `path_is_not_a_directory`, `file_not_found`.
 */
export async function resolveWorkspacePath(workspace: WorkspaceInfo, input: string): Promise<ResolvedWorkspacePath> {
  if (typeof input !== 'string' || input.length === 0) {
    throw new ToolcellError(ToolErrorType.INVALID_TOOL_PARAMS, 'The path must be a non-empty string.');
  }
  if (input.includes('\0')) {
    throw new ToolcellError(ToolErrorType.INVALID_TOOL_PARAMS, 'The path must not contain NUL characters.');
  }
  const absolute = absoluteWorkspacePath(workspace, input);
  const { real, exists } = await canonicalizePath(absolute);
  const root = findContainingRoot(workspace.roots, real);
  if (root === undefined) throw notInWorkspace(workspace, input);
  return { input, real, root, exists };
}

/** The error for a path that leads outside every root; it does not reveal where the path leads. */
export function notInWorkspace(workspace: WorkspaceInfo, input: string): ToolcellError {
  return new ToolcellError(
    ToolErrorType.PATH_NOT_IN_WORKSPACE,
    `Path is outside the workspace: ${input}. Paths must be relative to ${primaryRoot(workspace)} or absolute inside one of: ${workspace.roots.join(', ')}.`,
  );
}

/** A real path as people should see it: relative to the primary root when inside it. */
export function displayPath(workspace: WorkspaceInfo, path: string): string {
  const primary = primaryRoot(workspace);
  if (path === primary) return '.';
  return isInsideRoot(primary, path) ? relative(primary, path) : path;
}

function primaryRoot(workspace: WorkspaceInfo): string {
  const primary = workspace.roots[0];
  if (primary === undefined) throw new TypeError('workspace.roots must hold at least one root');
  return primary;
}
