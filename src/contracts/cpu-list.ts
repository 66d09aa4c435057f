import { z } from 'zod';

/**
 * A set of CPUs written as Linux writes one (`/proc/<pid>/status`'s
 * Cpus_allowed_list, cpuset.cpus, `taskset -c`, Docker's `--cpuset-cpus`):
 * numbers and ranges joined by commas, `1`, `0-3`, `0,2-5`. One schema for
 * the Docker backend's `cpuSet` and `serve --sandbox-cpus`. Only the forms
 * Docker accepts (no `0-7:2` strides, no spaces); written back in one
 * canonical spelling, ascending, each run of CPUs as one range.
 */

/** Above any machine toolcell runs on; bounds the work a hostile list can cause. */
export const MAX_CPU = 4095;

/** The CPUs of a list, ascending and distinct; a string says what is wrong with it. */
export function parseCpuList(text: string): number[] | string {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(text)) return 'must be CPU numbers and ranges joined by commas, e.g. 1 or 2-3 or 0,2-5';
  const cpus = new Set<number>();
  for (const part of text.split(',')) {
    const ends = part.split('-');
    const tooHigh = ends.find((end) => Number(end) > MAX_CPU);
    if (tooHigh !== undefined) return `names CPU ${tooHigh}, above ${MAX_CPU}`;
    const [first, last = first] = ends.map(Number) as [number, number?];
    if (first > last) return `has the range ${part}, which ends before it starts`;
    for (let cpu = first; cpu <= last; cpu++) cpus.add(cpu);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** CPUs written as a list (`0-2,5`); empty for none. */
export function formatCpuList(cpus: Iterable<number>): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let index = 0; index < sorted.length;) {
    let end = index;
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end]! + 1) end++;
    runs.push(end === index ? String(sorted[index]) : `${sorted[index]}-${sorted[end]}`);
    index = end + 1;
  }
  return runs.join(',');
}

/** A CPU list, checked and written back in its canonical spelling. */
export const cpuListSchema = z.string().transform((text, context) => {
  const cpus = parseCpuList(text);
  if (typeof cpus === 'string') {
    context.addIssue({ code: 'custom', message: cpus });
    return z.NEVER;
  }
  return formatCpuList(cpus);
});
