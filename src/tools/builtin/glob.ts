import { lstat } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { GitignoreFilter } from '../../fs/gitignore.js';
import { emptyWalkReport, walkFiles } from '../../fs/walk-files.js';
import { absoluteWorkspacePath, hostPattern, isInsideRoot, resolveWorkspacePath, shownPath } from '../../fs/workspace-paths.js';
import { defineTool } from '../define-tool.js';
import { toolErrorResult } from '../results.js';
import { failureResult } from './tool-failure.js';
import { linearGlob } from '../../fs/linear-glob.js';

/** At most this many paths are listed; the rest are counted. */
export const GLOB_MAX_RESULTS = 500;

/** Files changed this recently sort newest first; older ones alphabetically (Gemini CLI's rule). */
const RECENT_MS = 24 * 60 * 60 * 1000;

const parameters = z.object({
  pattern: z.string().min(1).describe("The glob pattern to match against (e.g., '**/*.py', 'docs/*.md')."),
  dir_path: z
    .string()
    .min(1)
    .optional()
    .describe('Optional: The directory to search within (relative to the workspace root, or absolute inside it). If omitted, searches the workspace root.'),
});

interface GlobMatch {
  path: string;
  mtimeMs: number;
}

/**
 * `glob`: files whose path (relative to `dir_path`) matches a glob,
 * case-insensitively, dotfiles included. Skips `.git`, `node_modules` (unless
 * the pattern names it) and what .gitignore ignores; never follows symlinks.
 * Returns absolute paths, recently changed files first.
 */
export const globTool = defineTool({
  name: 'glob',
  displayName: 'FindFiles',
  description:
    'Efficiently finds files matching specific glob patterns (e.g., `src/**/*.ts`, `**/*.md`), returning absolute paths sorted by modification time (newest first). Ideal for quickly locating files based on their name or path structure, especially in large codebases.',
  kind: 'search',
  parameters,
  describe: ({ pattern, dir_path }) => (dir_path ? `'${pattern}' within ${dir_path}` : `'${pattern}'`),
  locations: (params, workspace) => [{ path: absoluteWorkspacePath(workspace, params.dir_path ?? '.') }],
  async execute(params, { workspace, signal }) {
    try {
      const directory = await resolveWorkspacePath(workspace, params.dir_path ?? '.');
      if (!directory.exists) return toolErrorResult(ToolErrorType.FILE_NOT_FOUND, `Directory not found: ${params.dir_path}`);
      const onHost = hostPattern(workspace, params.pattern);
      const pattern = onHost === undefined ? null : relativePattern(onHost, directory.real);
      if (pattern === null) {
        return toolErrorResult(
          ToolErrorType.PATH_NOT_IN_WORKSPACE,
          `The pattern must be relative to the search directory, or absolute inside it: ${params.pattern}`,
        );
      }
      if (pattern.split('/').includes('..')) {
        return toolErrorResult(ToolErrorType.INVALID_TOOL_PARAMS, `Glob patterns must not climb out with '..': ${params.pattern}`);
      }
      const matches = linearGlob(pattern, { nocase: true });
      const report = emptyWalkReport();
      const found: GlobMatch[] = [];
      let unnamable = 0;
      for await (const file of walkFiles({
        workspace,
        root: directory.root,
        start: directory.real,
        gitignore: new GitignoreFilter({ workspace, root: directory.root }),
        skipDirectoryNames: pattern.includes('node_modules') ? new Set() : new Set(['node_modules']),
        signal,
        report,
      })) {
        if (!matches(file.relativePath)) continue;
        if (typeof file.path !== 'string') {
          unnamable += 1;
          continue;
        }
        found.push({ path: file.path, mtimeMs: await mtimeOf(file.path) });
      }
      const sorted = sortByRecency(found, Date.now());
      return {
        llmContent: renderMatches(
          params.pattern,
          shownPath(workspace, directory.real),
          sorted.map((match) => ({ ...match, path: shownPath(workspace, match.path) })),
          report.ignored,
          unnamable,
        ),
        returnDisplay: `Found ${found.length} matching file(s)`,
      };
    } catch (error) {
      return failureResult(error, ToolErrorType.SEARCH_FAILED);
    }
  },
});

/** The pattern relative to the search directory, or null for an absolute one outside it. */
function relativePattern(pattern: string, directory: string): string | null {
  if (!isAbsolute(pattern)) return pattern.replace(/^\.\//, '');
  if (!isInsideRoot(directory, pattern)) return null;
  return relative(directory, pattern).split(sep).join('/');
}

async function mtimeOf(path: string): Promise<number> {
  try {
    return (await lstat(path)).mtimeMs;
  } catch {
    return 0;
  }
}

/** Recently changed files first, newest first; then the rest by path. */
export function sortByRecency<T extends GlobMatch>(matches: T[], now: number): T[] {
  return [...matches].sort((a, b) => {
    const aRecent = now - a.mtimeMs < RECENT_MS;
    const bRecent = now - b.mtimeMs < RECENT_MS;
    if (aRecent && bRecent) return b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path);
    if (aRecent !== bRecent) return aRecent ? -1 : 1;
    return a.path.localeCompare(b.path);
  });
}

function renderMatches(pattern: string, directory: string, sorted: GlobMatch[], ignored: number, unnamable: number): string {
  const notes: string[] = [];
  if (ignored > 0) notes.push(`${ignored} path(s) ignored by .gitignore were not searched.`);
  if (unnamable > 0) notes.push(`${unnamable} matching file(s) with names that are not valid UTF-8 were left out (they cannot be named in a tool call).`);
  const noteText = notes.length > 0 ? `\n\n${notes.join('\n')}` : '';
  if (sorted.length === 0) return `No files found matching pattern "${pattern}" within ${directory}.${noteText}`;
  const shown = sorted.slice(0, GLOB_MAX_RESULTS).map((match) => match.path);
  const more = sorted.length - shown.length;
  const moreText = more > 0 ? `\n... and ${more} more file(s). Use a narrower pattern or dir_path to see them.` : '';
  return `Found ${sorted.length} file(s) matching "${pattern}" within ${directory}, sorted by modification time (newest first):\n${shown.join('\n')}${moreText}${noteText}`;
}
