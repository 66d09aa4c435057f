import type { Style } from './style.js';

/**
 * Colours a unified diff: additions green, removals red, hunk headers cyan,
 * file headers bold. Without colour, the diff's own +/- markers carry it.
 */
export function renderDiff(diff: string, style: Style, options: { maxLines?: number } = {}): string[] {
  const lines = diff.replace(/\n$/, '').split('\n');
  const max = options.maxLines ?? Number.POSITIVE_INFINITY;
  const shown = lines.slice(0, max).map((line) => {
    if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('Index:') || line.startsWith('===')) return style.bold(line);
    if (line.startsWith('+')) return style.green(line);
    if (line.startsWith('-')) return style.red(line);
    if (line.startsWith('@@')) return style.cyan(line);
    if (line.startsWith('\\')) return style.dim(line);
    return line;
  });
  if (lines.length > shown.length) shown.push(style.dim(`… ${lines.length - shown.length} more line(s)`));
  return shown;
}
