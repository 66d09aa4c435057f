import { join } from 'node:path';
import type { WorkspaceInfo } from '../define-tool.js';

/** The heading under which save_memory appends facts. */
export const MEMORY_SECTION_HEADING = '## Toolcell Added Memories';

/** Where save_memory keeps facts: `<stateDir>/memory.md`. */
export function memoryFilePath(workspace: WorkspaceInfo): string {
  return join(workspace.stateDir, 'memory.md');
}

/** A fact as one list item's text: one line, without leading list dashes. Empty when nothing is left. */
export function normalizeFact(fact: string): string {
  return fact
    .replace(/[\r\n]+/g, ' ')
    .trim()
    .replace(/^(-+\s*)+/, '')
    .trim();
}

/**
 * The memory file with `- fact` added as the last item of the
 * MEMORY_SECTION_HEADING section, creating the section at the end when it is
 * missing. Everything else in the file is kept as it was.
 */
export function appendMemory(current: string, fact: string): string {
  const item = `- ${normalizeFact(fact)}`;
  const headingAt = findHeading(current);
  if (headingAt === -1) {
    const separator = current === '' || current.endsWith('\n\n') ? '' : current.endsWith('\n') ? '\n' : '\n\n';
    return `${current}${separator}${MEMORY_SECTION_HEADING}\n${item}\n`;
  }
  const bodyStart = headingAt + MEMORY_SECTION_HEADING.length;
  const nextHeading = current.slice(bodyStart).search(/\n#{1,2} /);
  const sectionEnd = nextHeading === -1 ? current.length : bodyStart + nextHeading + 1;
  const section = current.slice(headingAt, sectionEnd).trimEnd();
  const after = current.slice(sectionEnd);
  return `${current.slice(0, headingAt)}${section}\n${item}\n${after === '' ? '' : `\n${after.replace(/^\n+/, '')}`}`;
}

/** Index of the heading at the start of a line, or -1. */
function findHeading(text: string): number {
  let index = text.indexOf(MEMORY_SECTION_HEADING);
  while (index !== -1) {
    const lineStart = index === 0 || text[index - 1] === '\n';
    const lineEnd = text.length === index + MEMORY_SECTION_HEADING.length || text[index + MEMORY_SECTION_HEADING.length] === '\n';
    if (lineStart && lineEnd) return index;
    index = text.indexOf(MEMORY_SECTION_HEADING, index + 1);
  }
  return -1;
}
