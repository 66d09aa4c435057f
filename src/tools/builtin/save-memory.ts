import { z } from 'zod';
import { ToolErrorType } from '../../errors.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';
import { encodeText } from '../../fs/text-encoding.js';
import { defineTool, type WorkspaceInfo } from '../define-tool.js';
import { toolErrorResult } from '../results.js';
import type { FileDiff } from '../tool.js';
import { loadEditableFile, type EditableFile } from './editable-file.js';
import { editConfirmation, makeFileDiff } from './file-diff.js';
import { appendMemory, memoryFilePath, normalizeFact } from './memory-file.js';
import { failureResult } from './tool-failure.js';

const parameters = z.object({
  fact: z.string().min(1).describe('The specific fact or piece of information to remember. Should be a clear, self-contained statement.'),
});

interface MemoryPlan {
  file: EditableFile;
  diff: FileDiff;
}

async function planSave(fact: string, workspace: WorkspaceInfo, signal: AbortSignal): Promise<MemoryPlan> {
  const file = await loadEditableFile(workspace, memoryFilePath(workspace), signal, { toolcellState: true });
  const newContent = appendMemory(file.text ?? '', fact);
  return { file, diff: makeFileDiff({ workspace, filePath: file.resolved.real, originalContent: file.text, newContent }) };
}

/**
 * `save_memory`: appends `- fact` under "## Toolcell Added Memories" in
 * `<stateDir>/memory.md`, atomically. It changes a file, so it is an `edit`
 * and asks first with a diff (approved automatically in autoEdit mode). Its
 * location is the memory file, so the scheduler serializes concurrent saves.
 */
export const saveMemoryTool = defineTool({
  name: 'save_memory',
  displayName: 'SaveMemory',
  description:
    'Saves a specific piece of information or fact to long-term memory (the workspace memory file) for use in later sessions. Use it when the user explicitly asks you to remember something, or states a clear, concise fact worth keeping. Do not use it for conversational context that only matters in this session.',
  kind: 'edit',
  parameters,
  describe: ({ fact }) => `in memory: "${normalizeFact(fact)}"`,
  locations: (_params, workspace) => [{ path: memoryFilePath(workspace) }],
  async confirm({ fact }, { workspace, signal }) {
    if (normalizeFact(fact) === '') return false;
    try {
      const { diff } = await planSave(fact, workspace, signal);
      return editConfirmation(`Confirm Memory Save: ${diff.fileName}`, diff);
    } catch {
      return false;
    }
  },
  async execute({ fact }, { workspace, signal }) {
    const normalized = normalizeFact(fact);
    if (normalized === '') return toolErrorResult(ToolErrorType.INVALID_TOOL_PARAMS, 'The fact must not be empty.');
    try {
      const { file, diff } = await planSave(fact, workspace, signal);
      await writeFileAtomic(workspace, file.resolved.real, encodeText(diff.newContent, file.encoding), { signal, createParents: true, toolcellState: true });
      return { llmContent: `Okay, I've remembered that: "${normalized}"`, returnDisplay: `Saved to memory: ${normalized}` };
    } catch (error) {
      return failureResult(error, ToolErrorType.FILE_WRITE_FAILURE);
    }
  },
});
