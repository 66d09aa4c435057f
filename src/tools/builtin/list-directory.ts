import { relative, sep } from 'node:path';
import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { decodeFileName } from '../../fs/file-names.js';
import { GitignoreFilter } from '../../fs/gitignore.js';
import { readConfinedDirectory } from '../../fs/read-directory.js';
import { absoluteWorkspacePath, displayPath, resolveWorkspacePath } from '../../fs/workspace-paths.js';
import { defineTool } from '../define-tool.js';
import { toolErrorResult } from '../results.js';
import { failureResult } from './tool-failure.js';
import { linearGlob } from '../../fs/linear-glob.js';

const parameters = z.object({
  dir_path: z.string().min(1).describe('The path to the directory to list: relative to the workspace root, or absolute inside the workspace.'),
  ignore: z.array(z.string()).optional().describe('List of glob patterns to ignore (matched against entry names).'),
});

interface ListedEntry {
  name: string;
  directory: boolean;
}

/**
 * `list_directory`: the names directly in one directory, directories first
 * (`[DIR] name`), then files, each group sorted. Hides `.git` and what
 * .gitignore ignores; symlinks are listed by name, never followed.
 */
export const listDirectoryTool = defineTool({
  name: 'list_directory',
  displayName: 'ReadFolder',
  description:
    'Lists the names of files and subdirectories directly within a specified directory path. Can optionally ignore entries matching provided glob patterns. Entries ignored by .gitignore are hidden.',
  kind: 'read',
  parameters,
  describe: ({ dir_path }) => dir_path,
  locations: (params, workspace) => [{ path: absoluteWorkspacePath(workspace, params.dir_path) }],
  async execute(params, { workspace }) {
    try {
      const resolved = await resolveWorkspacePath(workspace, params.dir_path);
      if (!resolved.exists) return toolErrorResult(ToolErrorType.FILE_NOT_FOUND, `Directory not found: ${params.dir_path}`);
      const entries = await readConfinedDirectory(workspace, resolved.real);
      const isIgnoredByPattern = params.ignore?.length ? linearGlob(params.ignore) : () => false;
      const gitignore = new GitignoreFilter({ workspace, root: resolved.root });
      const base = relative(resolved.root, resolved.real).split(sep).join('/');
      const listed: ListedEntry[] = [];
      let ignored = 0;
      for (const entry of entries) {
        const name = decodeFileName(entry.name);
        if (name.text === '.git') continue;
        const directory = entry.kind === 'directory';
        const fromRoot = base === '' ? name.text : `${base}/${name.text}`;
        if (isIgnoredByPattern(name.text) || (await gitignore.isIgnored(fromRoot, { directory }))) {
          ignored += 1;
          continue;
        }
        listed.push({ name: name.valid ? name.text : `${name.text} (name is not valid UTF-8)`, directory });
      }
      listed.sort((a, b) => (a.directory === b.directory ? a.name.localeCompare(b.name) : a.directory ? -1 : 1));
      const shown = displayPath(workspace, resolved.real);
      const ignoredNote = ignored > 0 ? ` (${ignored} ignored)` : '';
      if (listed.length === 0) {
        return { llmContent: `Directory ${shown} is empty.${ignoredNote}`, returnDisplay: `Directory is empty.${ignoredNote}` };
      }
      const lines = listed.map((entry) => (entry.directory ? `[DIR] ${entry.name}` : entry.name));
      return {
        llmContent: `Directory listing for ${shown}:\n${lines.join('\n')}${ignored > 0 ? `\n\n(${ignored} ignored)` : ''}`,
        returnDisplay: `Listed ${listed.length} item(s).${ignoredNote}`,
      };
    } catch (error) {
      return failureResult(error, ToolErrorType.READ_CONTENT_FAILURE);
    }
  },
});
