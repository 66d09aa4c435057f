/** Small helpers for benchmark figures. */
export function percentile(sortedMs: readonly number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[index]!;
}

export function sortNumbers(values: number[]): number[] {
  return values.sort((a, b) => a - b);
}

export function fmt(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}
