import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { formatBytes } from '../../fs/read-confined.js';
import { inlineMediaType } from '../../fs/media-types.js';
import { absoluteWorkspacePath, displayPath, resolveWorkspacePath } from '../../fs/workspace-paths.js';
import { defineTool } from '../define-tool.js';
import { toolErrorResult } from '../results.js';
import { readFileForModel } from './file-content.js';
import { renderLineWindow } from './text-lines.js';
import { failureResult } from './tool-failure.js';

const parameters = z.object({
  file_path: z.string().min(1).describe('The path to the file to read: relative to the workspace root, or absolute inside the workspace.'),
  start_line: z.number().int().min(1).optional().describe('Optional: The 1-based line number to start reading from.'),
  end_line: z.number().int().min(1).optional().describe('Optional: The 1-based line number to end reading at (inclusive).'),
});

/**
 * `read_file`: a text file's lines (at most 2000 unless a range is given,
 * with a note saying how to read on), an image or PDF as inlineData, or a
 * note for other binary files. Confined to the workspace.
 */
export const readFileTool = defineTool({
  name: 'read_file',
  displayName: 'ReadFile',
  description:
    "Reads and returns the content of a specified file. If the file is large, the content will be truncated. The tool's response will clearly indicate if truncation has occurred and will provide details on how to read more of the file using the 'start_line' and 'end_line' parameters. Handles text, images (PNG, JPG, GIF, WEBP, SVG, BMP), and PDF files. For text files, it can read specific line ranges.",
  kind: 'read',
  parameters,
  describe({ file_path, start_line, end_line }) {
    if (start_line === undefined && end_line === undefined) return file_path;
    return `${file_path} (lines ${start_line ?? 1}-${end_line ?? 'end'})`;
  },
  locations: (params, workspace) => [
    { path: absoluteWorkspacePath(workspace, params.file_path), ...(params.start_line !== undefined ? { line: params.start_line } : {}) },
  ],
  async execute(params, { workspace, signal }) {
    if (params.start_line !== undefined && params.end_line !== undefined && params.end_line < params.start_line) {
      return toolErrorResult(ToolErrorType.INVALID_TOOL_PARAMS, `end_line (${params.end_line}) must not be less than start_line (${params.start_line}).`);
    }
    try {
      const resolved = await resolveWorkspacePath(workspace, params.file_path);
      if (!resolved.exists) return toolErrorResult(ToolErrorType.FILE_NOT_FOUND, `File not found: ${params.file_path}`);
      const shown = displayPath(workspace, resolved.real);
      const content = await readFileForModel(workspace, resolved.real, {
        mediaType: inlineMediaType(resolved.real),
        startLine: params.start_line,
        endLine: params.end_line,
        signal,
      });
      switch (content.kind) {
        case 'media':
          return { llmContent: [content.part], returnDisplay: `Read ${content.mimeType} file: ${shown} (${formatBytes(content.size)})` };
        case 'binary':
          return {
            llmContent: `Cannot display content of binary file: ${shown} (${formatBytes(content.size)}).`,
            returnDisplay: `Skipped binary file: ${shown}`,
          };
        case 'text': {
          const { window } = content;
          const display = window.partial
            ? `Read lines ${window.firstLine}-${window.lastLine} of ${window.totalLines} from ${shown}`
            : `Read ${window.totalLines} lines from ${shown}`;
          return { llmContent: renderLineWindow(window), returnDisplay: display };
        }
      }
    } catch (error) {
      if (error instanceof RangeError) return toolErrorResult(ToolErrorType.INVALID_TOOL_PARAMS, error.message);
      return failureResult(error, ToolErrorType.READ_CONTENT_FAILURE);
    }
  },
});
