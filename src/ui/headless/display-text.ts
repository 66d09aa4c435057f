import type { ToolResultDisplay } from '../../tools/tool.js';

/** A result display as plain text: the string itself, or a file change's unified diff. */
export function displayText(display: ToolResultDisplay | undefined): string | undefined {
  if (display === undefined) return undefined;
  return typeof display === 'string' ? display : display.fileDiff;
}
