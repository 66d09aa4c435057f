import { MAX_LINE_CHARS, MAX_TEXT_LINES } from './limits.js';

/** A window of a text's lines, as shown to the model. */
export interface LineWindow {
  /** The selected lines joined with `\n`, long lines cut. */
  content: string;
  totalLines: number;
  /** 1-based first and last line shown; `lastLine < firstLine` when nothing is shown. */
  firstLine: number;
  lastLine: number;
  /** True when lines before or after the window exist. */
  partial: boolean;
  /** True when some shown line was cut to MAX_LINE_CHARS. */
  linesCut: boolean;
}

/**
 * Selects 1-based, inclusive lines `[startLine, endLine]` of `text`; without
 * `endLine`, at most MAX_TEXT_LINES lines from `startLine`. A final newline
 * does not start another line. Throws RangeError when `startLine` lies past
 * the last line (an empty text has no lines, but line 1 may still be asked for).
 */
export function selectLines(text: string, range: { startLine?: number | undefined; endLine?: number | undefined } = {}): LineWindow {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const totalLines = text === '' ? 0 : lines.length;
  const firstLine = range.startLine ?? 1;
  if (firstLine > Math.max(totalLines, 1)) {
    throw new RangeError(`start_line ${firstLine} is past the end of the file, which has ${totalLines} lines.`);
  }
  const requestedLast = range.endLine ?? firstLine + MAX_TEXT_LINES - 1;
  const lastLine = Math.min(requestedLast, totalLines);
  let linesCut = false;
  const shown = lines.slice(firstLine - 1, lastLine).map((line) => {
    if (line.length <= MAX_LINE_CHARS) return line;
    linesCut = true;
    return `${line.slice(0, MAX_LINE_CHARS)}... [line truncated]`;
  });
  const partial = firstLine > 1 || lastLine < totalLines;
  // The whole text, uncut, is returned byte for byte (final newline included).
  const content = !partial && !linesCut ? text : shown.join('\n');
  return { content, totalLines, firstLine, lastLine, partial, linesCut };
}

/**
 * The text the model gets for a window: the lines alone when the whole file
 * is shown, else a header saying which lines these are and how to ask for the
 * next ones (Gemini CLI's wording, so prompts written for it work).
 */
export function renderLineWindow(window: LineWindow): string {
  if (!window.partial && !window.linesCut) return window.content;
  const notes = ['', 'IMPORTANT: The file content has been truncated.'];
  notes.push(`Status: Showing lines ${window.firstLine}-${window.lastLine} of ${window.totalLines} total lines.`);
  if (window.lastLine < window.totalLines) {
    notes.push(
      `Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: ${window.lastLine + 1}.`,
    );
  }
  if (window.linesCut) notes.push(`Some lines were longer than ${MAX_LINE_CHARS} characters and were cut.`);
  return `${notes.join('\n')}\n\n--- FILE CONTENT (truncated) ---\n${window.content}`;
}
