/**
 * How the sandbox's cost grows with concurrent sessions: aggregate calls/s
 * and latency with N sessions each running `true` in a loop, and the time to
 * open many sessions at once.
 */
import { performance } from 'node:perf_hooks';
import type { ShellService } from '../src/shell/shell-service.js';
import type { ShellSessionHandle } from '../src/shell/session-handle.js';
import { percentile, sortNumbers } from './stats.js';

export interface ConcurrencyFigures {
  sessions: number;
  calls: number;
  callsPerSecond: number;
  p50: number;
  p99: number;
}

/** Runs `true` in a loop in each of the first `count` sessions for `durationMs`. */
export async function loadSessions(sessions: readonly ShellSessionHandle[], count: number, durationMs: number): Promise<ConcurrencyFigures> {
  const active = sessions.slice(0, count);
  await Promise.all(active.map((session) => session.run({ command: 'true' })));
  const samples: number[] = [];
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    active.map(async (session) => {
      while (performance.now() < deadline) {
        const begun = performance.now();
        const result = await session.run({ command: 'true' });
        if (result.exitCode !== 0) throw new Error(`\`true\` failed in ${session.id}: ${JSON.stringify(result)}`);
        samples.push(performance.now() - begun);
      }
    }),
  );
  const elapsed = performance.now() - start;
  sortNumbers(samples);
  return {
    sessions: count,
    calls: samples.length,
    callsPerSecond: samples.length / (elapsed / 1000),
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
  };
}

export interface OpenedSessions {
  sessions: ShellSessionHandle[];
  /** From the first openSession call until every session answered. */
  openMs: number;
  /** Sessions that did not open on Docker, or whose first `true` failed, with the reason. */
  failures: string[];
}

/** Opens `count` sessions at once, then runs one `true` in each. */
export async function openSessions(service: ShellService, workspaceRoot: string, count: number, prefix: string): Promise<OpenedSessions> {
  const start = performance.now();
  const settled = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => service.openSession({ sandbox: 'docker', workspaceRoot, sessionId: `${prefix}-${i}` })),
  );
  const openMs = performance.now() - start;
  const failures: string[] = [];
  const sessions: ShellSessionHandle[] = [];
  for (const outcome of settled) {
    if (outcome.status === 'rejected') failures.push(String(outcome.reason));
    else if (outcome.value.backend !== 'docker') failures.push(`${outcome.value.id}: ${outcome.value.describe()}`);
    else sessions.push(outcome.value);
  }
  const checks = await Promise.allSettled(sessions.map((session) => session.run({ command: 'true' })));
  checks.forEach((check, i) => {
    if (check.status === 'rejected') failures.push(`${sessions[i]!.id}: ${String(check.reason)}`);
    else if (check.value.exitCode !== 0) failures.push(`${sessions[i]!.id}: exit ${check.value.exitCode}`);
  });
  return { sessions, openMs, failures };
}
