import { isAbsolute, relative, sep } from 'node:path';
import { ToolErrorType, ToolcellError } from '../../errors.js';
import { linearGlob } from '../../fs/linear-glob.js';
import { findContainingRoot, hostPattern } from '../../fs/workspace-paths.js';
import type { WorkspaceInfo } from '../define-tool.js';

/** Glob patterns sorted by the workspace root they apply to, made relative to it. */
export type PatternsByRoot = Map<string, string[]>;

/**
 * Assigns each pattern to a root: relative patterns to the primary root,
 * absolute ones to the root they lie in. A trailing `/` or a bare directory
 * name also matches everything below it (`docs` → `docs`, `docs/**`).
 * Throws ToolcellError `path_not_in_workspace` for an absolute pattern
 * outside every root, `invalid_tool_params` for one climbing out with `..`.
 */
export function patternsByRoot(workspace: WorkspaceInfo, patterns: readonly string[]): PatternsByRoot {
  const grouped: PatternsByRoot = new Map();
  const primary = workspace.roots[0] as string;
  for (const raw of patterns) {
    let root = primary;
    let pattern = raw;
    if (isAbsolute(raw)) {
      const onHost = hostPattern(workspace, raw);
      const containing = onHost === undefined ? undefined : findContainingRoot(workspace.roots, staticPrefix(onHost));
      if (onHost === undefined || containing === undefined) {
        throw new ToolcellError(ToolErrorType.PATH_NOT_IN_WORKSPACE, `Pattern is outside the workspace: ${raw}`);
      }
      root = containing;
      pattern = relative(root, onHost).split(sep).join('/');
    }
    pattern = pattern.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (pattern.split('/').includes('..')) {
      throw new ToolcellError(ToolErrorType.INVALID_TOOL_PARAMS, `Patterns must not climb out with '..': ${raw}`);
    }
    const list = grouped.get(root) ?? [];
    if (pattern === '' || pattern === '.') list.push('**');
    else list.push(pattern, `${pattern}/**`);
    grouped.set(root, list);
  }
  return grouped;
}

/** A matcher for root-relative paths; dotfiles match, case matters (as on Linux). */
export function matcherFor(patterns: readonly string[]): (path: string) => boolean {
  return patterns.length === 0 ? () => false : linearGlob(patterns);
}

/** The part of a pattern before its first glob character, for locating its root. */
function staticPrefix(pattern: string): string {
  const index = pattern.search(/[*?[\]{}()!]/);
  if (index === -1) return pattern;
  const cut = pattern.slice(0, index);
  return cut.slice(0, Math.max(cut.lastIndexOf('/'), 1));
}
