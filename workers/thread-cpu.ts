import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** `process.threadCpuUsage` (Node 23.9 and later): this thread's own user and system time, in µs. */
type ThreadCpuUsage = () => { user: number; system: number };
const threadCpuUsage = (process as unknown as { threadCpuUsage?: ThreadCpuUsage }).threadCpuUsage?.bind(process);

/**
 * The CPU time this thread has used, in ms: what the work it did for a
 * caller is charged (WorkBudget), as opposed to its wall time, which on a
 * busy host counts the time the thread waited for a CPU. Node's own figure
 * where it has one, else the kernel's (`/proc/thread-self/schedstat`, its
 * first field in ns); where neither exists, wall time (which over-charges,
 * never under-charges).
 */
function threadCpuMs(): number {
  if (threadCpuUsage) {
    const { user, system } = threadCpuUsage();
    return (user + system) / 1000;
  }
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]) / 1e6;
  } catch {
    return performance.now();
  }
}

/** A stopwatch of this thread's CPU time: each call of what it returns gives the ms used since it was started. */
export function threadCpuStopwatch(): () => number {
  const start = threadCpuMs();
  return () => Math.max(0, threadCpuMs() - start);
}
