/**
 * What a live-output snapshot adds to the previous one of the same call.
 *
 * Each snapshot (LiveOutput text) is the last lines of a call's output and
 * replaces the one before; a stream consumer wants only what is new. The
 * new snapshot is aligned on the old one by the longest run of lines that
 * ends the old and starts the new, and the delta is what follows:
 *
 * - grown: the old last line is a prefix of its new version (more text on it)
 *   and whole lines follow: `"` more\nnext line"`;
 * - rewritten: the old last line was redrawn in place (a progress bar's `\r`):
 *   the delta starts with `\r` and the line's new text, as a terminal would
 *   receive it;
 * - no overlap (more lines arrived between two snapshots than one holds, or
 *   the screen was redrawn): a line break and the whole new snapshot.
 *
 * Concatenated, the deltas read like the output itself; lines that scrolled
 * past between two snapshots are not in any (the final result has them).
 */
export function liveDelta(previous: string, next: string): string {
  if (previous === '') return next;
  const old = previous.split('\n');
  const now = next.split('\n');
  const last = old.length - 1;
  const longest = Math.min(old.length, now.length);
  for (let overlap = longest; overlap >= 1; overlap--) {
    const joint = overlap - 1;
    if (!sameLines(old, last - joint, now, 0, joint)) continue;
    if (now[joint]!.startsWith(old[last]!)) return now[joint]!.slice(old[last]!.length) + tail(now, overlap);
  }
  // A rewrite is only believed when at least one whole line confirms the alignment,
  // or when the old snapshot was a single line (a lone progress bar).
  for (let overlap = longest; overlap >= (old.length === 1 ? 1 : 2); overlap--) {
    const joint = overlap - 1;
    if (sameLines(old, last - joint, now, 0, joint)) return `\r${now.slice(joint).join('\n')}`;
  }
  return `\n${next}`;
}

/** True when `count` lines of `a` from `aStart` equal those of `b` from `bStart`. */
function sameLines(a: string[], aStart: number, b: string[], bStart: number, count: number): boolean {
  for (let i = 0; i < count; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}

/** The lines of `lines` from `from` on, each after a line break. */
function tail(lines: string[], from: number): string {
  return from < lines.length ? `\n${lines.slice(from).join('\n')}` : '';
}
