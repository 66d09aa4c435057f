/** What `seq 1 n` prints. */
export function seqText(n: number): string {
  let text = '';
  for (let i = 1; i <= n; i++) text += `${i}\n`;
  return text;
}

/**
 * The first line (1-based) where `actual` and `expected` differ, with both
 * versions, or undefined when they are the same text: a readable failure
 * for files of hundreds of thousands of lines.
 */
export function firstDifferentLine(actual: string, expected: string): { line: number; actual: string | undefined; expected: string | undefined } | undefined {
  if (actual === expected) return undefined;
  const a = actual.split('\n');
  const e = expected.split('\n');
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (a[i] !== e[i]) return { line: i + 1, actual: a[i], expected: e[i] };
  }
  return undefined;
}
