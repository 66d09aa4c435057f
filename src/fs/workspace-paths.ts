import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';
import { SANDBOX_WORKSPACE_PATH, type WorkspaceInfo } from '../contracts/workspace-info.js';
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

/** The part of an absolute path below the sandbox's mount point (`''` for the mount point itself), or undefined. */
function belowSandboxRoot(absolute: string): string | undefined {
  const path = resolve(absolute);
  if (path === SANDBOX_WORKSPACE_PATH) return '';
  return path.startsWith(`${SANDBOX_WORKSPACE_PATH}/`) ? path.slice(SANDBOX_WORKSPACE_PATH.length + 1) : undefined;
}

/**
 * The host path a path parameter names, without touching the disk:
 * relative paths are taken from the primary root, and `/workspace/…` (the
 * sandbox's name for it) too, unless the path lies in a root as written
 * (a workspace that really is /workspace). With `hideHostPaths`, an
 * absolute path elsewhere is undefined: the caller has no host paths. For
 * display and `locations`; never use it to decide access (see
 * `resolveWorkspacePath`).
 */
export function hostWorkspacePath(workspace: WorkspaceInfo, input: string): string | undefined {
  const primary = primaryRoot(workspace);
  if (!isAbsolute(input)) return resolve(primary, input);
  const below = belowSandboxRoot(input);
  if (workspace.hideHostPaths) return below === undefined ? undefined : resolve(primary, below);
  const asWritten = resolve(input);
  if (below === undefined || findContainingRoot(workspace.roots, asWritten) !== undefined) return asWritten;
  return resolve(primary, below);
}

/** hostWorkspacePath, with a path a caller without host paths gave outside /workspace kept as written (it is refused). */
export function absoluteWorkspacePath(workspace: WorkspaceInfo, input: string): string {
  return hostWorkspacePath(workspace, input) ?? resolve(input);
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
  const absolute = hostWorkspacePath(workspace, input);
  if (absolute === undefined) throw notInWorkspace(workspace, input);
  const { real, exists } = await canonicalizePath(absolute);
  const root = findContainingRoot(workspace.roots, real);
  if (root === undefined) throw notInWorkspace(workspace, input);
  return { input, real, root, exists };
}

/** The error for a path that leads outside every root; it does not reveal where the path leads. */
export function notInWorkspace(workspace: WorkspaceInfo, input: string): ToolcellError {
  const where = workspace.hideHostPaths
    ? `Paths must be relative to the workspace root (${SANDBOX_WORKSPACE_PATH}) or absolute inside it.`
    : `Paths must be relative to ${primaryRoot(workspace)} or absolute inside one of: ${workspace.roots.join(', ')} (${SANDBOX_WORKSPACE_PATH} names the first, as in the sandbox).`;
  return new ToolcellError(ToolErrorType.PATH_NOT_IN_WORKSPACE, `Path is outside the workspace: ${input}. ${where}`);
}

/**
 * A real path as an absolute path in the caller's terms: with
 * `hideHostPaths`, under /workspace (a path in another root, which such a
 * caller cannot name, shows as relative to it); otherwise the real path.
 */
export function shownPath(workspace: WorkspaceInfo, path: string): string {
  if (!workspace.hideHostPaths) return path;
  const primary = primaryRoot(workspace);
  if (path === primary) return SANDBOX_WORKSPACE_PATH;
  if (isInsideRoot(primary, path)) return `${SANDBOX_WORKSPACE_PATH}/${relative(primary, path)}`;
  const root = findContainingRoot(workspace.roots, path);
  return root === undefined ? '.' : relative(root, path) || '.';
}

/** A real path as people should see it: relative to the primary root when inside it, else shownPath. */
export function displayPath(workspace: WorkspaceInfo, path: string): string {
  const primary = primaryRoot(workspace);
  if (path === primary) return '.';
  return isInsideRoot(primary, path) ? relative(primary, path) : shownPath(workspace, path);
}

/**
 * A text of toolcell's (a message, an error) in the caller's terms: with
 * `hideHostPaths`, every root's host path in it becomes /workspace (the
 * primary) or `.` (another); otherwise the text as it is. The last guard
 * for a message written with a host path in it.
 */
export function inCallerTerms(workspace: WorkspaceInfo, text: string): string {
  if (!workspace.hideHostPaths) return text;
  const primary = primaryRoot(workspace);
  let result = text;
  // Longest first, so that a root inside another is replaced whole.
  for (const root of [...workspace.roots].sort((a, b) => b.length - a.length)) {
    result = result.split(root).join(root === primary ? SANDBOX_WORKSPACE_PATH : '.');
  }
  return result;
}

function primaryRoot(workspace: WorkspaceInfo): string {
  const primary = workspace.roots[0];
  if (primary === undefined) throw new TypeError('workspace.roots must hold at least one root');
  return primary;
}

/**
 * A glob pattern in host terms: an absolute one under /workspace becomes one
 * under the primary root (as hostWorkspacePath does for paths; taken as
 * written, since a pattern cannot be resolved). Undefined for an absolute
 * pattern elsewhere when the caller has no host paths.
 */
export function hostPattern(workspace: WorkspaceInfo, pattern: string): string | undefined {
  if (!isAbsolute(pattern)) return pattern;
  const underSandbox = pattern === SANDBOX_WORKSPACE_PATH || pattern.startsWith(`${SANDBOX_WORKSPACE_PATH}/`);
  const mapped = underSandbox ? `${primaryRoot(workspace)}${pattern.slice(SANDBOX_WORKSPACE_PATH.length)}` : undefined;
  if (workspace.hideHostPaths || (mapped !== undefined && !workspace.roots.some((root) => isInsideRoot(root, pattern)))) return mapped;
  return pattern;
}
