/**
 * How the sandbox's cost grows with concurrent sessions: aggregate calls/s
 * and latency with N sessions each running `true` in a loop, and the time to
 * open many sessions at once.
 */
import { readFileSync } from 'node:fs';
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

/** Busy and total CPU time of the whole machine so far (ms), from /proc/stat. */
function machineTimes(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  // idle and iowait are fields 4 and 5.
  return { busy: (total - (cpu[3] ?? 0) - (cpu[4] ?? 0)) * 10, total: total * 10 };
}

/** Runs `once` in `loops` concurrent loops for `durationMs`; calls/s. */
async function loopRate(once: () => Promise<unknown>, loops: number, durationMs: number): Promise<number> {
  let calls = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (performance.now() < deadline) {
        await once();
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - start) / 1000);
}

export interface ScalingFigures {
  /** Median over the rounds of (many sessions' calls/s) / (one session's), each pair measured back to back. */
  sandbox: number;
  /** The same for unsandboxed `bash -c true` loops on the host, in the same rounds. */
  host: number;
  /** Share of the machine's CPU time that was busy during the rounds (all processes, ours and others'). */
  machineBusy: number;
}

/**
 * The scaling figure of one session to `many`, robust to a machine whose
 * other load changes from second to second: `rounds` rounds, each timing
 * one session, `many` sessions, one host loop and `many` host loops back to
 * back, so every ratio compares figures taken within seconds of each other.
 */
export async function measureScaling(input: {
  sessions: readonly ShellSessionHandle[];
  many: number;
  hostOnce: () => Promise<unknown>;
  rounds: number;
  durationMs: number;
}): Promise<ScalingFigures> {
  const sandboxRatios: number[] = [];
  const hostRatios: number[] = [];
  const before = machineTimes();
  const sandboxOnce = (session: ShellSessionHandle) => () => session.run({ command: 'true' });
  for (let round = 0; round < input.rounds; round++) {
    const one = await loopRate(sandboxOnce(input.sessions[0]!), 1, input.durationMs);
    const many = (await loadSessions(input.sessions, input.many, input.durationMs)).callsPerSecond;
    sandboxRatios.push(many / one);
    const hostOne = await loopRate(input.hostOnce, 1, input.durationMs);
    const hostMany = await loopRate(input.hostOnce, input.many, input.durationMs);
    hostRatios.push(hostMany / hostOne);
  }
  const after = machineTimes();
  const median = (values: number[]) => percentile(sortNumbers(values), 50);
  return { sandbox: median(sandboxRatios), host: median(hostRatios), machineBusy: (after.busy - before.busy) / (after.total - before.total) };
}
