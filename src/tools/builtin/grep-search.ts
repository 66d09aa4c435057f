import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { parseOptions } from '../../contracts/parse-options.js';
import { absoluteWorkspacePath, resolveWorkspacePath } from '../../fs/workspace-paths.js';
import { defineTool } from '../define-tool.js';
import { toolErrorResult } from '../results.js';
import type { GrepRequest } from './grep/grep-types.js';
import { formatMatches } from './grep/format-matches.js';
import { searchWithJavaScript } from './grep/js-grep.js';
import { compileLineRegex, MAX_PATTERN_CHARS } from './grep/line-regex.js';
import { failureResult } from './tool-failure.js';

/** The search stops after this many matching lines. */
export const GREP_MAX_MATCHES = 500;

/**
 * Which engine searches. There is one: JavaScript, reading each file through
 * a descriptor opened without following links and verified to lie inside the
 * workspace, as read_file does. External engines open files by path, and a
 * workspace a sandbox can write is a workspace whose paths change under
 * them: ripgrep, with a folder and a symlink swapped in a loop
 * (renameat2 RENAME_EXCHANGE), returned a host file's lines, and waited
 * for ever on a FIFO named `.gitignore`; git grep took its work tree and
 * pathspec magic from the repository's own configuration (a
 * `core.worktree = /` searched the host). `auto` stays accepted. The
 * walk and the reads are JavaScript's; the matching is RE2's, in linear
 * time (grep/line-regex.ts).
 */
export type GrepEngineChoice = 'auto' | 'javascript';

const ENGINE_CHOICES: readonly GrepEngineChoice[] = ['auto', 'javascript'];

/** Environment variable that picks the engine when the definition does not (e.g. `javascript`). */
export const GREP_ENGINE_ENV = 'TOOLCELL_GREP_ENGINE';

const parameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      `The regular expression (regex) pattern to search for within file contents (e.g., 'function\\s+myFunction', 'import\\s+\\{.*\\}\\s+from\\s+.*'). Matching is case-insensitive, line by line, in linear time (RE2 syntax): backreferences (\\1), lookahead/lookbehind ((?=, (?!, (?<=, (?<!) and repetition counts over 1000 are not supported. At most ${MAX_PATTERN_CHARS} characters.`,
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

const grepSearchToolOptionsSchema = z.strictObject({
  name: z.string().min(1),
  engine: z.enum(ENGINE_CHOICES, { error: `must be one of ${ENGINE_CHOICES.join(', ')}` }).optional(),
});

/**
 * A grep tool definition. `grep_search` and its alias `search_file_content`
 * are two of these. `engine` fixes the engine (tests); otherwise the
 * TOOLCELL_GREP_ENGINE variable or `auto` decides, at execute time.
 */
export function createGrepSearchTool(raw: z.input<typeof grepSearchToolOptionsSchema>) {
  const options = parseOptions(grepSearchToolOptionsSchema, raw, 'createGrepSearchTool');
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
      // Compiled in the worker, as the search runs: RE2's compile is bounded by the pattern's length.
      const compiled = compileLineRegex(params.pattern);
      if (!compiled.ok) return toolErrorResult(compiled.type, compiled.message);
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
        const outcome = await searchWithJavaScript({ ...request, regex: compiled.regex });
        const { matches } = outcome;
        const llmContent = formatMatches({
          pattern: params.pattern,
          where: params.dir_path ?? '.',
          include: params.include_pattern,
          matches,
          truncated: outcome.truncated,
        });
        return { llmContent, returnDisplay: `Found ${matches.length} match${matches.length === 1 ? '' : 'es'} (javascript)` };
      } catch (error) {
        return failureResult(error, ToolErrorType.SEARCH_FAILED);
      }
    },
  });
}

function engineFromEnvironment(): GrepEngineChoice | null {
  const value = process.env[GREP_ENGINE_ENV];
  if (value === undefined || value === '') return 'auto';
  return ENGINE_CHOICES.includes(value as GrepEngineChoice) ? (value as GrepEngineChoice) : null;
}

/** `grep_search`. */
export const grepSearchTool = createGrepSearchTool({ name: 'grep_search' });

/** `search_file_content`: the older name of `grep_search`, same behaviour. */
export const searchFileContentTool = createGrepSearchTool({ name: 'search_file_content' });
