/**
 * gVisor (runsc) beside runc, in one run on one machine: the same figures
 * for a shell service on each runtime, each ratio runsc ÷ runc.
 *
 *   warm `true`                    p50 of calls in an open session, both runtimes interleaved
 *   a new session's first call     open (a spare pre-started) + first `true`
 *   256 MB through the PTY         `cat` of a 256 MB text file, end to end
 *   8 sessions ÷ 1                 aggregate calls/s of 8 sessions over one's (median of pairs)
 *
 * Targets: a warm call under runsc ≤ 2× runc's, a new session ≤ 2× runc's.
 * The workspace belongs to an ordinary user (uid 10001), so commands run as
 * that user on both runtimes, as for a user's own checkout.
 */
import { chown, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ShellService } from '../src/shell/shell-service.js';
import type { ShellSessionHandle } from '../src/shell/session-handle.js';
import { hostSpawnTrue } from './host-spawn.js';
import { measureScaling, openSessions } from './sandbox-concurrency.js';
import { fmt, percentile, sortNumbers } from './stats.js';
import { timeEach, timeInterleaved } from './timing.js';
import { BENCH_USER, userWorkspace } from './user-workspace.js';

const MiB = 1024 * 1024;
const FLOOD_BYTES = 256 * MiB;
const RUNTIMES = ['runc', 'runsc'] as const;
type Runtime = (typeof RUNTIMES)[number];

export interface RuntimeComparisonOptions {
  calls: number;
  runs: number;
  scalingRounds: number;
  dockerOptions: Record<string, unknown>;
  row: (label: string, figure: string, target?: string) => void;
}

/** Prints the runtime rows; returns false (printing why) when the engine has no runsc. */
export async function compareRuntimes(options: RuntimeComparisonOptions): Promise<boolean> {
  const { calls, runs, scalingRounds, row } = options;
  const workspace = await userWorkspace('toolcell-bench-runtimes-');
  const services = {} as Record<Runtime, ShellService>;
  const warm = {} as Record<Runtime, ShellSessionHandle>;
  try {
    for (const runtime of RUNTIMES) {
      services[runtime] = await ShellService.create({ docker: { ...options.dockerOptions, runtime, warmPool: 1 } });
      warm[runtime] = await services[runtime].openSession({ sandbox: 'docker', workspaceRoot: workspace, sessionId: `bench-rt-${runtime}` });
      if (warm[runtime].backend !== 'docker') {
        console.log(`runtimes: skipped, ${runtime} is not available: ${warm[runtime].describe()}`);
        return false;
      }
    }
    const p50 = (samples: number[]) => percentile(samples, 50);
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    console.log('gVisor (runsc) beside runc, same image and hardening');

    const latency = await timeInterleaved({ runc: () => warm.runc.run({ command: 'true' }), runsc: () => warm.runsc.run({ command: 'true' }) }, calls);
    for (const runtime of RUNTIMES) row(`warm \`true\`, ${runtime}`, `p50 ${fmt(p50(latency[runtime]))}  p99 ${fmt(percentile(latency[runtime], 99))}`);
    row('ratio warm `true` runsc / runc (p50)', ratio(p50(latency.runsc), p50(latency.runc)), 'target ≤ 2×');

    const first = { runc: [] as number[], runsc: [] as number[] };
    for (let i = 0; i < runs; i++) {
      for (const runtime of RUNTIMES) {
        // The warm pool's spare has started, as on an idle host.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const start = performance.now();
        const fresh = await services[runtime].openSession({ sandbox: 'docker', workspaceRoot: workspace, sessionId: `bench-rt-new-${runtime}-${i}` });
        await fresh.run({ command: 'true' });
        first[runtime].push(performance.now() - start);
        await fresh.close();
      }
    }
    for (const runtime of RUNTIMES) row(`new session: open + first \`true\`, ${runtime}`, `p50 ${fmt(p50(sortNumbers(first[runtime])))}`);
    row('ratio new session runsc / runc (p50)', ratio(p50(first.runsc), p50(first.runc)), 'target ≤ 2×');

    const line = `${'x'.repeat(127)}\n`;
    const chunk = Buffer.from(line.repeat(MiB / line.length));
    const flood = await open(join(workspace, 'flood.txt'), 'w');
    for (let written = 0; written < FLOOD_BYTES; written += chunk.length) await flood.write(chunk);
    await flood.close();
    await chown(join(workspace, 'flood.txt'), BENCH_USER, BENCH_USER);
    const through = {} as Record<Runtime, number[]>;
    for (const runtime of RUNTIMES) through[runtime] = await timeEach(2, () => warm[runtime].run({ command: 'cat flood.txt' }), 0);
    const mbps = (ms: number) => `${(FLOOD_BYTES / MiB / (ms / 1000)).toFixed(0)} MB/s`;
    for (const runtime of RUNTIMES) row(`256 MB through the PTY, ${runtime}`, `${mbps(p50(through[runtime]))} (${fmt(p50(through[runtime]))})`);
    row('ratio 256 MB time runsc / runc', ratio(p50(through.runsc), p50(through.runc)));

    const scaling = {} as Record<Runtime, number>;
    for (const runtime of RUNTIMES) {
      const pool = await openSessions(services[runtime], workspace, 8, `bench-rt-load-${runtime}`);
      if (pool.failures.length > 0) throw new Error(`${runtime}: sessions failed to open: ${pool.failures.slice(0, 3).join('; ')}`);
      scaling[runtime] = (
        await measureScaling({
          sessions: pool.sessions,
          many: 8,
          hostOnce: () => hostSpawnTrue({ PATH: '/usr/bin:/bin' }),
          rounds: scalingRounds,
          durationMs: 2000,
        })
      ).sandbox;
      await Promise.allSettled(pool.sessions.map((session) => session.close()));
      row(`8 sessions / 1 session, ${runtime}`, `${scaling[runtime].toFixed(2)}×`);
    }
    row('ratio of the 8 ÷ 1 scaling, runsc / runc', ratio(scaling.runsc, scaling.runc));
    console.log('');
    return true;
  } finally {
    for (const runtime of RUNTIMES) {
      await warm[runtime]?.close().catch(() => undefined);
      await services[runtime]?.close().catch(() => undefined);
    }
    await rm(workspace, { recursive: true, force: true });
  }
}
