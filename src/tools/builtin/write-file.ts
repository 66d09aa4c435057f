import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';
import { encodeText } from '../../fs/text-encoding.js';
import { absoluteWorkspacePath, displayPath, shownPath } from '../../fs/workspace-paths.js';
import { defineTool, type WorkspaceInfo } from '../define-tool.js';
import type { FileDiff } from '../tool.js';
import { loadEditableFile, type EditableFile } from './editable-file.js';
import { editConfirmation, makeFileDiff } from './file-diff.js';
import { failureResult } from './tool-failure.js';

const parameters = z.object({
  file_path: z.string().min(1).describe('The path to the file to write to: relative to the workspace root, or absolute inside the workspace.'),
  content: z
    .string()
    .describe(
      "The content to write to the file. Do not use omission placeholders like '(rest of methods ...)', '...', or 'unchanged code'; provide complete literal content.",
    ),
});

type WriteFileParams = z.output<typeof parameters>;

interface WritePlan {
  file: EditableFile;
  diff: FileDiff;
}

async function planWrite(params: WriteFileParams, workspace: WorkspaceInfo, signal: AbortSignal): Promise<WritePlan> {
  const file = await loadEditableFile(workspace, params.file_path, signal);
  const diff = makeFileDiff({ workspace, filePath: file.resolved.real, originalContent: file.text, newContent: params.content });
  return { file, diff };
}

/**
 * `write_file`: replaces (or creates) a whole file, atomically, keeping the
 * old file's permission bits and text encoding; missing parent directories
 * inside the workspace are created. Asks first with a diff; the user may
 * edit the proposed content.
 */
export const writeFileTool = defineTool({
  name: 'write_file',
  displayName: 'WriteFile',
  description:
    'Writes content to a specified file in the local filesystem.\n\nThe user has the ability to modify `content`. If modified, this will be stated in the response.',
  kind: 'edit',
  parameters,
  describe: ({ file_path }) => `Writing to ${file_path}`,
  locations: (params, workspace) => [{ path: absoluteWorkspacePath(workspace, params.file_path) }],
  async confirm(params, { workspace, signal }) {
    try {
      const { diff } = await planWrite(params, workspace, signal);
      return editConfirmation(`Confirm Write: ${diff.fileName}`, diff);
    } catch {
      // The failure is reported by execute; there is nothing to approve.
      return false;
    }
  },
  async execute(params, { workspace, signal }) {
    try {
      const { file, diff } = await planWrite(params, workspace, signal);
      const { created } = await writeFileAtomic(workspace, file.resolved.real, encodeText(params.content, file.encoding), {
        signal,
        createParents: true,
      });
      const where = displayPath(workspace, file.resolved.real);
      const shown = shownPath(workspace, file.resolved.real);
      const llmContent = created ? `Successfully created and wrote to new file: ${shown}.` : `Successfully overwrote file: ${shown}.`;
      return { llmContent, returnDisplay: diff, summary: `${created ? 'Created' : 'Wrote'} ${where}` };
    } catch (error) {
      return failureResult(error, ToolErrorType.FILE_WRITE_FAILURE);
    }
  },
  modifiable: {
    createUpdatedParams: ({ modifiedContent, params }) => ({ ...params, content: modifiedContent }),
  },
});
