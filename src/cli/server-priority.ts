import { getPriority, setPriority } from 'node:os';
import { errorMessage } from '../errors.js';

/**
 * The hosting server's event loop at nice -5. Every call of every tenant
 * passes through it (and through the shell thread it starts, which inherits
 * its priority); the work a tenant chooses runs below it (file tools at
 * nice 10, long commands' parsing at its own), and tenants' commands run in
 * containers whose processes cannot raise theirs. On a busy host the event
 * loop otherwise waits for a CPU as long as it runs: with `--sandbox-cpus`,
 * under every attack of bench/hosting at once, B's p99 was 94-170 ms at
 * nice -5 against 156-236 ms at 0 (docs/benchmarks.md).
 */
export const HOSTING_EVENT_LOOP_NICE = -5;

/**
 * Raises the calling thread (the main thread; on Linux setpriority applies
 * to one thread, and threads and processes started later inherit it) to
 * HOSTING_EVENT_LOOP_NICE. A process started at another nice (nice(1),
 * systemd's `Nice=`) keeps the operator's choice. Returns what happened, for
 * the start-up line, or why it could not (no root nor CAP_SYS_NICE).
 */
export function raiseEventLoopPriority(): { nice: number; changed: boolean } | { problem: string } {
  const current = getPriority();
  if (current !== 0) return { nice: current, changed: false };
  try {
    setPriority(HOSTING_EVENT_LOOP_NICE);
  } catch (error) {
    return { problem: `the event loop stays at nice 0 (nice ${HOSTING_EVENT_LOOP_NICE} needs root or CAP_SYS_NICE): ${errorMessage(error)}` };
  }
  return { nice: HOSTING_EVENT_LOOP_NICE, changed: true };
}
