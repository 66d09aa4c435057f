import { createTwoFilesPatch } from 'diff';
import { displayPath } from '../../fs/workspace-paths.js';
import type { WorkspaceInfo } from '../define-tool.js';
import type { EditConfirmationDetails, FileDiff } from '../tool.js';

/** A proposed or applied change to one file as a unified diff (`Current` → `Proposed`). */
export function makeFileDiff(input: {
  workspace: WorkspaceInfo;
  /** Real path of the file. */
  filePath: string;
  /** null when the file does not exist yet. */
  originalContent: string | null;
  newContent: string;
}): FileDiff {
  const fileName = displayPath(input.workspace, input.filePath);
  const fileDiff = createTwoFilesPatch(fileName, fileName, input.originalContent ?? '', input.newContent, 'Current', 'Proposed', {
    context: 3,
  });
  return { fileDiff, fileName, filePath: input.filePath, originalContent: input.originalContent, newContent: input.newContent };
}

/** The 'edit' confirmation showing `diff`. */
export function editConfirmation(title: string, diff: FileDiff): EditConfirmationDetails {
  return { type: 'edit', title, ...diff };
}
