import { basename, extname } from 'node:path';
import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { classifyFsFailure } from '../../fs/fs-failure.js';
import { GitignoreFilter } from '../../fs/gitignore.js';
import { inlineMediaType } from '../../fs/media-types.js';
import { walkFiles } from '../../fs/walk-files.js';
import { displayPath, shownPath } from '../../fs/workspace-paths.js';
import { defineTool, type WorkspaceInfo } from '../define-tool.js';
import type { Part } from '../tool.js';
import { readFileForModel } from './file-content.js';
import { renderLineWindow } from './text-lines.js';
import { failureResult } from './tool-failure.js';
import { matcherFor, patternsByRoot } from './workspace-globs.js';

/** At most this many files are read; the rest are listed as skipped. */
export const READ_MANY_MAX_FILES = 500;

/** Total bytes of text and media returned; files past it are skipped. */
export const READ_MANY_MAX_TOTAL_BYTES = 10 * 1024 * 1024;

const parameters = z.object({
  include: z
    .array(z.string().min(1))
    .min(1)
    .describe('An array of glob patterns or paths, relative to the workspace root. Examples: ["src/**/*.ts"], ["README.md", "docs/"]'),
  exclude: z.array(z.string().min(1)).optional().describe('Optional. Glob patterns for files/directories to exclude. Example: ["**/*.log", "temp/"]'),
});

type ReadManyParams = z.output<typeof parameters>;

interface Candidate {
  path: string | Buffer;
  shown: string;
  validName: boolean;
}

interface Gathered {
  parts: Array<Part | string>;
  read: string[];
  skipped: Array<{ path: string; reason: string }>;
}

/**
 * `read_many_files`: the text of every file matching the include globs
 * (minus excludes, .gitignore, `.git` and `node_modules`), each after a
 * `--- <path> ---` separator. Images and PDFs become inlineData parts when
 * their name or extension is in the patterns; other binary files are skipped
 * with a note. Reads are confined and capped in count and total size.
 */
export const readManyFilesTool = defineTool({
  name: 'read_many_files',
  displayName: 'ReadManyFiles',
  description:
    "Reads content from multiple files specified by glob patterns within the workspace. For text files, it concatenates their content into a single string, with a '--- {filePath} ---' separator before each file and '--- End of content ---' after the last. Images (e.g. .png, .jpg) and PDF files are included as data only if their file names or extensions are explicitly named in 'include'. Other binary files are skipped. Files ignored by .gitignore, and .git and node_modules, are skipped. Use it to understand or analyze a collection of files, such as all TypeScript files in 'src'.",
  kind: 'read',
  parameters,
  describe: ({ include, exclude }) => `include: ${include.join(', ')}${exclude?.length ? `; exclude: ${exclude.join(', ')}` : ''}`,
  async execute(params, { workspace, signal }) {
    try {
      const candidates = await findCandidates(params, workspace, signal);
      const gathered = await gather(candidates, params.include, workspace, signal);
      if (gathered.read.length === 0) {
        return { llmContent: 'No files matching the criteria were found or all were skipped.', returnDisplay: summary(gathered) };
      }
      gathered.parts.push('\n--- End of content ---');
      return { llmContent: gathered.parts, returnDisplay: summary(gathered) };
    } catch (error) {
      return failureResult(error, ToolErrorType.READ_CONTENT_FAILURE);
    }
  },
});

async function findCandidates(params: ReadManyParams, workspace: WorkspaceInfo, signal: AbortSignal): Promise<Candidate[]> {
  const includes = patternsByRoot(workspace, params.include);
  const excludes = patternsByRoot(workspace, params.exclude ?? []);
  const candidates: Candidate[] = [];
  for (const [root, patterns] of includes) {
    const included = matcherFor(patterns);
    const excluded = matcherFor(excludes.get(root) ?? []);
    const wantsNodeModules = patterns.some((pattern) => pattern.includes('node_modules'));
    for await (const file of walkFiles({
      workspace,
      root,
      start: root,
      gitignore: new GitignoreFilter({ workspace, root }),
      skipDirectoryNames: wantsNodeModules ? new Set() : new Set(['node_modules']),
      signal,
    })) {
      if (!included(file.rootRelativePath) || excluded(file.rootRelativePath)) continue;
      const shown = typeof file.path === 'string' ? displayPath(workspace, file.path) : file.rootRelativePath;
      candidates.push({ path: file.path, shown, validName: file.validName });
    }
  }
  return candidates;
}

async function gather(candidates: Candidate[], include: string[], workspace: WorkspaceInfo, signal: AbortSignal): Promise<Gathered> {
  const gathered: Gathered = { parts: [], read: [], skipped: [] };
  let totalBytes = 0;
  for (const candidate of candidates) {
    const skip = (reason: string): void => void gathered.skipped.push({ path: candidate.shown, reason });
    if (!candidate.validName || typeof candidate.path !== 'string') {
      skip('name is not valid UTF-8');
      continue;
    }
    if (gathered.read.length >= READ_MANY_MAX_FILES) {
      skip(`more than ${READ_MANY_MAX_FILES} files matched`);
      continue;
    }
    const mediaType = inlineMediaType(candidate.path);
    if (mediaType !== undefined && !namedExplicitly(candidate.path, include)) {
      skip('image/PDF files are only read when named explicitly in include');
      continue;
    }
    try {
      const content = await readFileForModel(workspace, candidate.path, { mediaType, signal });
      if (content.kind === 'binary') {
        skip('binary file');
        continue;
      }
      const size = content.kind === 'media' ? content.size : Buffer.byteLength(content.window.content);
      if (totalBytes + size > READ_MANY_MAX_TOTAL_BYTES) {
        skip('total size limit reached');
        continue;
      }
      totalBytes += size;
      const part: Part | string =
        content.kind === 'media' ? content.part : `--- ${shownPath(workspace, candidate.path)} ---\n\n${renderLineWindow(content.window)}\n\n`;
      gathered.parts.push(part);
      gathered.read.push(candidate.shown);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      skip(classifyFsFailure(error, ToolErrorType.READ_CONTENT_FAILURE).message);
    }
  }
  return gathered;
}

/** Gemini CLI's rule: an include pattern mentions the file's extension or its name. */
function namedExplicitly(path: string, include: string[]): boolean {
  const extension = extname(path).toLowerCase();
  const name = basename(path);
  return include.some((pattern) => pattern.toLowerCase().includes(extension) || pattern.includes(name));
}

function summary(gathered: Gathered): string {
  let text = '### ReadManyFiles Result\n\n';
  if (gathered.read.length > 0) {
    text += `Read and concatenated content from **${gathered.read.length} file(s)**.\n\n**Processed Files:**\n`;
    text += gathered.read
      .slice(0, 10)
      .map((path) => `- \`${path}\``)
      .join('\n');
    if (gathered.read.length > 10) text += `\n- ...and ${gathered.read.length - 10} more.`;
  } else {
    text += 'No files were read.';
  }
  if (gathered.skipped.length > 0) {
    text += `\n\n**Skipped ${gathered.skipped.length} item(s):**\n`;
    text += gathered.skipped
      .slice(0, 5)
      .map((item) => `- \`${item.path}\` (${item.reason})`)
      .join('\n');
    if (gathered.skipped.length > 5) text += `\n- ...and ${gathered.skipped.length - 5} more.`;
  }
  return text;
}
