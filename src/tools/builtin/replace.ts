import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';
import { encodeText } from '../../fs/text-encoding.js';
import { absoluteWorkspacePath, shownPath } from '../../fs/workspace-paths.js';
import { defineTool, type WorkspaceInfo } from '../define-tool.js';
import { toolErrorResult } from '../results.js';
import type { FileDiff, ToolResult } from '../tool.js';
import { loadEditableFile, type EditableFile } from './editable-file.js';
import { editConfirmation, makeFileDiff } from './file-diff.js';
import { applyReplacement } from './replacement.js';
import { failureResult } from './tool-failure.js';

const parameters = z.object({
  file_path: z.string().min(1).describe('The path to the file to modify: relative to the workspace root, or absolute inside the workspace.'),
  old_string: z
    .string()
    .describe(
      'The exact literal text to replace, unescaped, including whitespace and indentation. For a single replacement, include at least 3 lines of context before and after the target text. An empty string creates a new file.',
    ),
  new_string: z.string().describe('The exact literal text to replace old_string with, unescaped. Provide complete code, no omission placeholders.'),
  allow_multiple: z
    .boolean()
    .optional()
    .describe('If true, every occurrence of old_string is replaced. If false (default), the edit only succeeds when exactly one occurrence is found.'),
});

type ReplaceParams = z.output<typeof parameters>;

type EditPlan = { ok: true; file: EditableFile; diff: FileDiff; newText: string; occurrences: number } | { ok: false; failure: ToolResult };

async function planEdit(params: ReplaceParams, workspace: WorkspaceInfo, signal: AbortSignal): Promise<EditPlan> {
  const file = await loadEditableFile(workspace, params.file_path, signal);
  if (file.binary) {
    return { ok: false, failure: toolErrorResult(ToolErrorType.FILE_IS_BINARY, `Cannot edit a binary file: ${params.file_path}`) };
  }
  const outcome = applyReplacement({
    currentText: file.text,
    oldString: params.old_string,
    newString: params.new_string,
    allowMultiple: params.allow_multiple ?? false,
  });
  if (!outcome.ok) return { ok: false, failure: toolErrorResult(outcome.type, `${outcome.message} (${params.file_path})`) };
  const diff = makeFileDiff({ workspace, filePath: file.resolved.real, originalContent: file.text, newContent: outcome.newText });
  return { ok: true, file, diff, newText: outcome.newText, occurrences: outcome.occurrences };
}

/**
 * `replace`: exact, literal text replacement in one file (see
 * `applyReplacement` for the rules), written atomically. Asks first with a
 * diff; the user may edit the proposed file, which becomes the new content.
 */
export const replaceTool = defineTool({
  name: 'replace',
  displayName: 'Edit',
  description:
    "Replaces text within a file. By default, the tool expects to find and replace exactly ONE occurrence of `old_string`. If you want to replace multiple occurrences of the exact same string, set `allow_multiple` to true. This tool requires providing significant context around the change to ensure precise targeting. Always use the read_file tool to examine the file's current content before attempting a text replacement.\n\nThe user has the ability to modify the `new_string` content. If modified, this will be stated in the response.\n\n1. `old_string` MUST be the exact literal text to replace (including all whitespace, indentation, newlines, and surrounding code).\n2. `new_string` MUST be the exact literal text to replace `old_string` with.\n3. NEVER escape `old_string` or `new_string`.\nTo create a new file, pass an empty `old_string` and the whole content as `new_string`.",
  kind: 'edit',
  parameters,
  describe({ file_path, old_string, new_string }) {
    if (old_string === '') return `Create ${file_path}`;
    const first = (text: string): string => (text.split('\n')[0] ?? '').slice(0, 30);
    return `${file_path}: ${first(old_string)} => ${first(new_string)}`;
  },
  locations: (params, workspace) => [{ path: absoluteWorkspacePath(workspace, params.file_path) }],
  async confirm(params, { workspace, signal }) {
    try {
      const plan = await planEdit(params, workspace, signal);
      return plan.ok ? editConfirmation(`Confirm Edit: ${plan.diff.fileName}`, plan.diff) : false;
    } catch {
      // The failure is reported by execute; there is nothing to approve.
      return false;
    }
  },
  async execute(params, { workspace, signal }) {
    try {
      const plan = await planEdit(params, workspace, signal);
      if (!plan.ok) return plan.failure;
      const { created } = await writeFileAtomic(workspace, plan.file.resolved.real, encodeText(plan.newText, plan.file.encoding), {
        signal,
        createParents: true,
      });
      const path = shownPath(workspace, plan.file.resolved.real);
      const llmContent = created
        ? `Created new file: ${path} with provided content.`
        : `Successfully modified file: ${path} (${plan.occurrences} replacement${plan.occurrences === 1 ? '' : 's'}).`;
      return { llmContent, returnDisplay: plan.diff };
    } catch (error) {
      return failureResult(error, ToolErrorType.FILE_WRITE_FAILURE);
    }
  },
  modifiable: {
    // The user edited the whole proposed file: replace the whole current file with it.
    createUpdatedParams: ({ originalContent, modifiedContent, params }) => ({
      ...params,
      old_string: originalContent,
      new_string: modifiedContent,
      allow_multiple: false,
    }),
  },
});
