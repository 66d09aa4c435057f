import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ToolErrorType, isToolcellError } from '../../errors.js';
import { absoluteWorkspacePath, resolveWorkspacePath } from '../../fs/workspace-paths.js';
import { defineTool, type WorkspaceInfo } from '../define-tool.js';
import { toolErrorResult } from '../results.js';
import type { GrepEngine, GrepEngineName, GrepMatch, GrepOutcome, GrepRequest } from './grep/grep-types.js';
import { formatMatches } from './grep/format-matches.js';
import { searchWithJavaScript } from './grep/js-grep.js';
import { searchWithRipgrep } from './grep/ripgrep.js';
import { failureResult } from './tool-failure.js';

/** The search stops after this many matching lines. */
export const GREP_MAX_MATCHES = 500;

/**
 * Which engine searches: `auto` tries ripgrep, then JavaScript. There is no
 * git grep engine: git takes its work tree, file names and pathspec magic
 * from the repository's own configuration, which whoever controls the
 * workspace writes (a `core.worktree = /` made it search the host), and the
 * JavaScript engine already covers what it was for (patterns ripgrep's
 * dialect refuses, hosts without ripgrep).
 */
export type GrepEngineChoice = 'auto' | 'ripgrep' | 'javascript';

const ENGINE_CHOICES: readonly GrepEngineChoice[] = ['auto', 'ripgrep', 'javascript'];

/** Environment variable that picks the engine when the definition does not (e.g. `javascript`). */
export const GREP_ENGINE_ENV = 'TOOLCELL_GREP_ENGINE';

const ENGINES: Readonly<Record<Exclude<GrepEngineChoice, 'auto'>, { name: GrepEngineName; run: GrepEngine }>> = {
  ripgrep: { name: 'ripgrep', run: searchWithRipgrep },
  javascript: { name: 'javascript', run: searchWithJavaScript },
};

const parameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      "The regular expression (regex) pattern to search for within file contents (e.g., 'function\\s+myFunction', 'import\\s+\\{.*\\}\\s+from\\s+.*'). Matching is case-insensitive.",
    ),
  dir_path: z
    .string()
    .min(1)
    .optional()
    .describe('Optional: The directory to search within (relative to the workspace root, or absolute inside it). If omitted, searches the workspace root.'),
  include_pattern: z
    .string()
    .min(1)
    .refine((glob) => !glob.startsWith('/') && !glob.split('/').includes('..'), {
      error: "is matched against paths below dir_path: it cannot start with '/' or contain a '..' segment",
    })
    .optional()
    .describe(
      "Optional: A glob pattern to filter which files are searched (e.g., '*.js', '*.{ts,tsx}', 'src/**'). If omitted, searches all files (respecting .gitignore).",
    ),
});

/**
 * A grep tool definition. `grep_search` and its alias `search_file_content`
 * are two of these. `engine` fixes the engine (tests); otherwise the
 * TOOLCELL_GREP_ENGINE variable or `auto` decides, at execute time.
 */
export function createGrepSearchTool(options: { name: string; engine?: GrepEngineChoice }) {
  if (options.engine !== undefined && !ENGINE_CHOICES.includes(options.engine)) {
    throw new TypeError(`createGrepSearchTool: options.engine must be one of ${ENGINE_CHOICES.join(', ')}`);
  }
  return defineTool({
    name: options.name,
    displayName: 'SearchText',
    description: `Searches for a regular expression pattern within file contents, case-insensitively. Max ${GREP_MAX_MATCHES} matches. Output lists matching lines grouped by file as 'File: path' then 'L<line>: text'.`,
    kind: 'search',
    parameters,
    describe: ({ pattern, dir_path, include_pattern }) =>
      `'${pattern}'${dir_path ? ` within ${dir_path}` : ''}${include_pattern ? ` in ${include_pattern}` : ''}`,
    locations: (params, workspace) => [{ path: absoluteWorkspacePath(workspace, params.dir_path ?? '.') }],
    async execute(params, { workspace, signal }) {
      try {
        new RegExp(params.pattern, 'i');
      } catch (error) {
        return toolErrorResult(ToolErrorType.INVALID_TOOL_PARAMS, `Invalid regular expression pattern: ${(error as Error).message}`);
      }
      const choice = options.engine ?? engineFromEnvironment();
      if (choice === null) {
        return toolErrorResult(ToolErrorType.SEARCH_FAILED, `${GREP_ENGINE_ENV} must be one of ${ENGINE_CHOICES.join(', ')}`);
      }
      try {
        const directory = await resolveWorkspacePath(workspace, params.dir_path ?? '.');
        if (!directory.exists) return toolErrorResult(ToolErrorType.FILE_NOT_FOUND, `Directory not found: ${params.dir_path}`);
        if (!(await stat(directory.real)).isDirectory()) {
          return toolErrorResult(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Not a directory: ${params.dir_path}`);
        }
        const request: GrepRequest = { workspace, directory, pattern: params.pattern, include: params.include_pattern, maxMatches: GREP_MAX_MATCHES, signal };
        const searched = await search(choice, request);
        if (searched === null) return toolErrorResult(ToolErrorType.SEARCH_FAILED, `The ${choice} search engine is not available here.`);
        const matches =
          searched.engine === 'javascript' ? searched.outcome.matches : await keepInsideWorkspace(workspace, directory.real, searched.outcome.matches);
        const llmContent = formatMatches({
          pattern: params.pattern,
          where: params.dir_path ?? '.',
          include: params.include_pattern,
          matches,
          truncated: searched.outcome.truncated,
        });
        return { llmContent, returnDisplay: `Found ${matches.length} match${matches.length === 1 ? '' : 'es'} (${searched.engine})` };
      } catch (error) {
        return failureResult(error, ToolErrorType.SEARCH_FAILED);
      }
    },
  });
}

async function search(choice: GrepEngineChoice, request: GrepRequest): Promise<{ outcome: GrepOutcome; engine: GrepEngineName } | null> {
  const order = choice === 'auto' ? (['ripgrep', 'javascript'] as const) : [choice];
  for (const key of order) {
    const engine = ENGINES[key];
    const outcome = await engine.run(request);
    if (outcome !== null) return { outcome, engine: engine.name };
  }
  return null;
}

function engineFromEnvironment(): GrepEngineChoice | null {
  const value = process.env[GREP_ENGINE_ENV];
  if (value === undefined || value === '') return 'auto';
  return ENGINE_CHOICES.includes(value as GrepEngineChoice) ? (value as GrepEngineChoice) : null;
}

/**
 * External engines read files themselves; drop any match whose file does not
 * (any longer) resolve inside the workspace, as a second line of defence.
 */
async function keepInsideWorkspace(workspace: WorkspaceInfo, directory: string, matches: GrepMatch[]): Promise<GrepMatch[]> {
  const verdicts = new Map<string, Promise<boolean>>();
  const inside = (file: string): Promise<boolean> => {
    let verdict = verdicts.get(file);
    if (verdict === undefined) {
      verdict = resolveWorkspacePath(workspace, join(directory, file)).then(
        () => true,
        (error: unknown) => !(isToolcellError(error) && error.code === ToolErrorType.PATH_NOT_IN_WORKSPACE),
      );
      verdicts.set(file, verdict);
    }
    return verdict;
  };
  const kept: GrepMatch[] = [];
  for (const match of matches) if (await inside(match.file)) kept.push(match);
  return kept;
}

/** `grep_search`. */
export const grepSearchTool = createGrepSearchTool({ name: 'grep_search' });

/** `search_file_content`: the older name of `grep_search`, same behaviour. */
export const searchFileContentTool = createGrepSearchTool({ name: 'search_file_content' });
