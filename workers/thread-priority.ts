import { readdirSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers this thread's OS priority to `nice` (0-19). On Linux a thread's
 * priority is its own: setpriority on this thread's id leaves the rest of the
 * process alone. Used by the threads that do work a tenant chose (long
 * commands' parsing, file tools on a hosting server), so that on a busy host
 * that work waits for the threads every tenant's calls go through (the event
 * loop, the shell thread), never the other way round.
 */
export function lowerThisThreadPriority(nice: unknown): void {
  if (typeof nice !== 'number' || !(nice > 0)) return;
  try {
    setPriority(Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]), nice);
  } catch {
    // No /proc, or not allowed: the thread keeps the process's priority.
  }
}

/**
 * Puts every thread of this process at `nice` or below in priority: a
 * process forked by a server that raised its event loop's priority
 * (serve --tenants: nice -5) inherits that, but the work it does is a
 * tenant's (web pages turned into text), never the event loop's.
 */
export function notAbovePriority(nice: number): void {
  try {
    for (const tid of readdirSync('/proc/self/task')) if (getPriority(Number(tid)) < nice) setPriority(Number(tid), nice);
  } catch {
    // No /proc: the process keeps what it inherited.
  }
}
