/**
 * bench/workspace-writes: what the per-command workspace growth limit costs
 * a command that writes (sandbox/supervisor/quota.py samples the workspace's
 * file system while each command runs).
 *
 * For each runtime the engine has (runc, runsc), one session with the limit
 * on (the defaults: 1 GiB, 100,000 files) and one with it off, side by side:
 * each case runs `--runs` times on each, interleaved, and the medians and
 * the ratio on ÷ off are printed. `--image TAG` runs both sessions on
 * another build's sandbox image (its supervisor), e.g. the previous commit's,
 * to compare two builds' sampling in one run with `--baseline-image TAG`.
 *
 *   npm run bench:workspace-writes -- [--runs N] [--image TAG] [--baseline-image TAG] [--runtime runc|runsc]
 */
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createDockerBackend } from '../src/backends/docker/index.js';
import type { ShellSession } from '../src/backends/backend.js';
import type { DockerShellBackend } from '../src/backends/docker/docker-backend.js';
import { assertRuntimeAvailable } from '../src/backends/docker/runtimes.js';
import { runCommand } from '../test/helpers/docker.js';
import { percentile, sortNumbers } from './stats.js';
import { userWorkspace } from './user-workspace.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    image: { type: 'string' },
    'baseline-image': { type: 'string' },
    runtime: { type: 'string', multiple: true },
  },
});
const runs = Number(values.runs);

const CASES: Array<{ name: string; command: string }> = [
  { name: '512 MiB, 8 KiB writes (head)', command: 'head -c 512M /dev/zero > written; rm written' },
  { name: '512 MiB, 1 MiB writes (dd)', command: 'dd if=/dev/zero of=written bs=1M count=512 status=none; rm written' },
  {
    name: '20,000 new files',
    command: `python3 -c 'import os
os.mkdir("many")
for i in range(20000):
    os.close(os.open(f"many/{i}", os.O_CREAT | os.O_WRONLY))'; rm -rf many`,
  },
];

/** One build's two sessions: the growth limit on (the defaults) and off. */
interface Pair {
  build: string;
  on: ShellSession;
  off: ShellSession;
}

/** What a run opened, for its clean-up. */
interface Opened {
  backends: DockerShellBackend[];
  workspaces: string[];
}

async function openSession(opened: Opened, runtime: string, image: string | undefined, limited: boolean): Promise<ShellSession> {
  const workspace = await userWorkspace('toolcell-bench-writes-');
  opened.workspaces.push(workspace);
  const backend = await createDockerBackend({
    runtime,
    warmPool: 0,
    ...(image !== undefined ? { image } : {}),
    ...(limited ? {} : { limits: { workspaceGrowthBytes: 0, workspaceGrowthFiles: 0 } }),
  });
  opened.backends.push(backend);
  return backend.openSession({ sessionId: `bench-writes-${process.pid}-${opened.backends.length}`, workspaceRoot: workspace });
}

async function timeOnce(session: ShellSession, command: string): Promise<number> {
  const started = performance.now();
  const result = await runCommand(session, command, { mode: 'pipes' });
  if (result.status.exitCode !== 0) throw new Error(`${command}: ${JSON.stringify(result.status)} ${result.stderr}`);
  return performance.now() - started;
}

async function benchRuntime(runtime: string): Promise<void> {
  const opened: Opened = { backends: [], workspaces: [] };
  const pairs: Pair[] = [];
  try {
    const builds: Array<[string, string | undefined]> = [['this build', values.image]];
    if (values['baseline-image'] !== undefined) builds.push(['baseline', values['baseline-image']]);
    for (const [build, image] of builds) {
      pairs.push({ build, on: await openSession(opened, runtime, image, true), off: await openSession(opened, runtime, image, false) });
    }
    const sessions = pairs.flatMap(({ on, off }) => [on, off]);
    console.log(`\n${runtime}`);
    for (const { name, command } of CASES) {
      const samples = new Map(sessions.map((session) => [session, [] as number[]]));
      for (const session of sessions) await timeOnce(session, command); // warm-up
      for (let i = 0; i < runs; i++) for (const session of sessions) samples.get(session)?.push(await timeOnce(session, command));
      const median = (session: ShellSession) => percentile(sortNumbers(samples.get(session) ?? []), 50);
      console.log(`  ${name}`);
      for (const { build, on, off } of pairs) {
        console.log(`    ${build}: limit on ${median(on).toFixed(0)} ms, off ${median(off).toFixed(0)} ms, on ÷ off ${(median(on) / median(off)).toFixed(2)}×`);
      }
    }
  } finally {
    for (const backend of opened.backends) await backend.close();
    for (const workspace of opened.workspaces) await rm(workspace, { recursive: true, force: true });
  }
}

for (const runtime of values.runtime ?? ['runc', 'runsc']) {
  try {
    await assertRuntimeAvailable(runtime);
  } catch (error) {
    console.log(`\n${runtime}: skipped: ${(error as Error).message}`);
    continue;
  }
  await benchRuntime(runtime);
}
