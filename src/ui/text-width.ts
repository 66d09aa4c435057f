import { stripAnsi } from './style.js';

/** Columns one code point takes in a terminal: 2 for East Asian wide and emoji, 0 for combining marks. */
function codePointWidth(code: number): number {
  if (code === 0 || (code >= 0x300 && code <= 0x36f) || (code >= 0x200b && code <= 0x200f) || code === 0xfe0f) return 0;
  if (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Terminal columns a string takes, ignoring ANSI escapes. */
export function textWidth(text: string): number {
  let width = 0;
  for (const char of stripAnsi(text)) width += codePointWidth(char.codePointAt(0) ?? 0);
  return width;
}

/**
 * Cuts a string (which may hold ANSI escapes) to at most `columns` columns,
 * ending with `…` when cut; escapes are kept and a reset is appended so a
 * cut colour does not leak into the next line.
 */
export function truncateToWidth(text: string, columns: number): string {
  if (columns <= 0) return '';
  if (textWidth(text) <= columns) return text;
  let out = '';
  let width = 0;
  // eslint-disable-next-line no-control-regex
  const tokens = text.match(/\x1b\[[0-9;?]*[A-Za-z]|[\s\S]/gu) ?? [];
  for (const token of tokens) {
    if (token.startsWith('\x1b')) {
      out += token;
      continue;
    }
    const w = codePointWidth(token.codePointAt(0) ?? 0);
    if (width + w > columns - 1) break;
    out += token;
    width += w;
  }
  return `${out}…\x1b[0m`;
}

/**
 * Splits plain text at the last space that keeps the head within `columns`
 * (or hard at `columns` when there is none). Returns [head, rest], or
 * undefined when the text already fits.
 */
export function breakLine(text: string, columns: number): [string, string] | undefined {
  if (textWidth(text) <= columns) return undefined;
  let width = 0;
  let cut = 0;
  let lastSpace = -1;
  for (const char of text) {
    const w = codePointWidth(char.codePointAt(0) ?? 0);
    if (width + w > columns) break;
    width += w;
    cut += char.length;
    if (char === ' ') lastSpace = cut;
  }
  // A space right after the cut is the best place to break.
  if (text[cut] === ' ') lastSpace = cut + 1;
  const at = lastSpace > 0 ? lastSpace : Math.max(cut, 1);
  return [text.slice(0, at).trimEnd(), text.slice(at)];
}

/** Human byte counts: 512 B, 1.5 KB, 3.2 MB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
