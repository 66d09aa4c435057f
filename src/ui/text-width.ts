import stringWidth from 'string-width';

/**
 * Terminal widths come from string-width (Unicode's East Asian Width and
 * emoji data, kept current by its maintainers), measured per grapheme, so a
 * flag or a family emoji is one unit that is never cut in half.
 */
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Terminal columns a string takes, ignoring ANSI escapes. */
export function textWidth(text: string): number {
  return stringWidth(text);
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
  // Escapes (kept whole) and the plain runs between them.
  // eslint-disable-next-line no-control-regex -- splitting at escape sequences is the point.
  const tokens = text.match(/\x1b\[[0-9;?]*[A-Za-z]|[^\x1b]+|\x1b/g) ?? [];
  outer: for (const token of tokens) {
    if (token.startsWith('\x1b')) {
      out += token;
      continue;
    }
    for (const { segment } of graphemes.segment(token)) {
      const w = stringWidth(segment);
      if (width + w > columns - 1) break outer;
      out += segment;
      width += w;
    }
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
  for (const { segment } of graphemes.segment(text)) {
    const w = stringWidth(segment);
    if (width + w > columns) break;
    width += w;
    cut += segment.length;
    if (segment === ' ') lastSpace = cut;
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
