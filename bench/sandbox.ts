/**
 * bench/sandbox: what the hardened Docker sandbox costs, against baselines
 * measured in the same run with the same hardening and image. Prints
 * figures and the targets beside them; asserts nothing.
 *
 *   latency of `true`, warm session   toolcell (ShellService → shell thread → supervisor) p50/p95/p99,
 *                                     the backend alone (no thread hop), vs the unsandboxed host
 *                                     (`bash -c true` through child_process and through node-pty,
 *                                     timed in interleaved rounds with toolcell), CLI `docker exec`
 *                                     into a warm container and Engine API exec (dockerode)
 *   first call of a new session       open + first `true` (pre-started spare) vs `docker run --rm`
 *   concurrency                       aggregate calls/s and p50/p99 with 1-32 sessions each running
 *                                     `true` in a loop (one pass per level); the 8-to-1 ratio as the
 *                                     median of back-to-back pairs, beside the same ratio for host
 *                                     spawns; the time to open 100 sessions at once
 *   throughput                        256 MB of text output end to end vs `cat` of the same bytes
 *                                     into /dev/null (host, and inside the container)
 *   event loop                        main-thread delay p99 while four 256 MB floods run
 *   memory                            resident-set growth during and after the floods
 *   runtimes                          gVisor (runsc) beside runc: warm `true`, a new session, 256 MB
 *                                     through the PTY, 8 sessions ÷ 1, each ratio runsc ÷ runc
 *                                     (sandbox-runtimes.ts; skipped when the engine has no runsc)
 *
 *   npm run bench:sandbox -- [--calls N] [--runs N] [--image REF] [--load-seconds S] [--open N] [--scaling-rounds N] [--only runtimes]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, open, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { createDockerBackend } from '../src/backends/docker/docker-backend.js';
import { buildShellEnvironment } from '../src/shell/environment.js';
import { ShellService } from '../src/shell/shell-service.js';
import { hostPtyTrue, hostSpawnTrue } from './host-spawn.js';
import { loadSessions, measureScaling, openSessions } from './sandbox-concurrency.js';
import { compareRuntimes } from './sandbox-runtimes.js';
import { fmt, percentile, sortNumbers } from './stats.js';
import { timeEach, timeInterleaved } from './timing.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '300' },
    runs: { type: 'string', default: '8' },
    image: { type: 'string' },
    'load-seconds': { type: 'string', default: '3' },
    open: { type: 'string', default: '100' },
    'scaling-rounds': { type: 'string', default: '5' },
    only: { type: 'string' },
  },
});
const loadMs = Number(values['load-seconds']) * 1000;
const openCount = Number(values.open);
const scalingRounds = Number(values['scaling-rounds']);
const CONCURRENCY_LEVELS = [1, 2, 4, 8, 16, 32];
const calls = Number(values.calls);
const runs = Number(values.runs);
const FLOOD_BYTES = 256 * 1024 * 1024;
const MiB = 1024 * 1024;

function sh(file: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, [...args], { maxBuffer: 64 * MiB }, (error, stdout, stderr) =>
      error ? reject(new Error(`${file} ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout),
    );
  });
}

const rows: Array<[string, string, string]> = [];
function row(label: string, figure: string, target = ''): void {
  rows.push([label, figure, target]);
  console.log(`  ${label.padEnd(58)} ${figure.padEnd(26)} ${target}`);
}

const dockerOptions: Record<string, unknown> = values.image ? { image: values.image } : {};
const runtimeRows = () => compareRuntimes({ calls, runs, scalingRounds, dockerOptions, row });
if (values.only === 'runtimes') {
  await runtimeRows();
  process.exit(0);
}
const workspace = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-bench-sandbox-')));
console.log(
  `bench/sandbox: Node ${process.version}, ${calls} calls per latency figure, ${runs} runs for session starts and docker run, workspace ${workspace}`,
);

// --- toolcell: warm session ------------------------------------------------
const backend = await createDockerBackend(dockerOptions);
const image = backend.image;
const hardening = [
  '--network',
  'none',
  '--read-only',
  '--tmpfs',
  '/tmp:rw,nosuid,nodev,size=268435456',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '--pids-limit',
  '256',
  '--memory',
  '1g',
  '--memory-swap',
  '1g',
  '--cpus',
  '1',
  '--ulimit',
  'fsize=1073741824',
  '--ulimit',
  'nofile=1024:1024',
  '--init',
  '--user',
  '10001:10001',
  '--log-driver',
  'none',
];
console.log(`image ${image}; baselines use the same image and: ${hardening.join(' ')}`);
console.log('');

const env = buildShellEnvironment({ backend: 'docker', hostEnv: {}, cols: 80, rows: 24 });
const rawSession = await backend.openSession({ sessionId: 'bench-raw', workspaceRoot: workspace });
const rawTrue = async () => {
  const proc = await rawSession.spawn({ command: 'true', cwd: '', env, mode: 'pty' });
  await proc.exited;
};
const service = await ShellService.create({ docker: dockerOptions });
const session = await service.openSession({ sandbox: 'docker', workspaceRoot: workspace, sessionId: 'bench-warm' });
// The host baselines get the same small environment the sandbox's commands get.
const hostEnv = { ...env, PATH: process.env['PATH'] ?? env['PATH'] ?? '/usr/bin:/bin' };
const latency = await timeInterleaved(
  {
    service: () => session.run({ command: 'true' }),
    backend: rawTrue,
    hostSpawn: () => hostSpawnTrue(hostEnv),
    hostPty: () => hostPtyTrue(hostEnv),
  },
  calls,
);
const serviceLatency = latency.service;
const backendLatency = latency.backend;

// --- baselines: docker exec (CLI), Engine API exec, docker run --rm ----------
const warmId = (await sh('docker', ['run', '-d', '--rm', ...hardening, image, 'sleep', 'infinity'])).trim();
const cliExec = await timeEach(Math.min(calls, 60), () => sh('docker', ['exec', warmId, 'true']), 3);
const docker = new Docker();
const warm = docker.getContainer(warmId);
const apiExec = await timeEach(
  Math.min(calls, 100),
  async () => {
    const exec = await warm.exec({ Cmd: ['true'], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({ hijack: true, stdin: false });
    await new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.resume();
    });
    await exec.inspect();
  },
  3,
);
const dockerRun = await timeEach(runs, () => sh('docker', ['run', '--rm', ...hardening, image, 'true']), 1);

console.log('latency of `true`');
const p50 = (s: number[]) => percentile(s, 50);
const p95 = (s: number[]) => percentile(s, 95);
const p99 = (s: number[]) => percentile(s, 99);
const spread = (s: number[]) => `p50 ${fmt(p50(s))}  p95 ${fmt(p95(s))}  p99 ${fmt(p99(s))}`;
row(
  'toolcell warm session (ShellService, shell thread)',
  spread(serviceLatency),
  `target p50 ≤ 1.5× host spawn (${fmt(1.5 * p50(latency.hostSpawn))}) and ≤ 0.1× CLI exec (${fmt(0.1 * p50(cliExec))})`,
);
row('toolcell backend alone (main thread, no thread hop)', spread(backendLatency));
row('baseline: host `bash -c true`, child_process (no sandbox)', spread(latency.hostSpawn));
row('baseline: host `bash -c true`, node-pty (no sandbox)', spread(latency.hostPty));
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
row(
  'ratio warm / host child_process spawn (p50, p99)',
  `${ratio(p50(serviceLatency), p50(latency.hostSpawn))}  ${ratio(p99(serviceLatency), p99(latency.hostSpawn))}`,
  'target p50 ≤ 1.5×',
);
row('ratio warm / host node-pty spawn (p50, p99)', `${ratio(p50(serviceLatency), p50(latency.hostPty))}  ${ratio(p99(serviceLatency), p99(latency.hostPty))}`);
row('baseline: docker exec (CLI) into a warm container', spread(cliExec));
row('baseline: exec through the Engine API (dockerode)', spread(apiExec));
row('ratio warm p50 / CLI docker exec p50', `${(p50(serviceLatency) / p50(cliExec)).toFixed(3)}×`, 'target ≤ 0.1×');

// --- first call of a new session --------------------------------------------
const firstCalls: number[] = [];
for (let i = 0; i < runs; i++) {
  // Give the warm pool time to start its spare, as an idle host would have.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const start = performance.now();
  const fresh = await service.openSession({ sandbox: 'docker', workspaceRoot: workspace, sessionId: `bench-new-${i}` });
  await fresh.run({ command: 'true' });
  firstCalls.push(performance.now() - start);
  await fresh.close();
}
sortNumbers(firstCalls);
row(
  'toolcell new session: open + first `true` (spare pre-started)',
  `p50 ${fmt(p50(firstCalls))}  max ${fmt(firstCalls[firstCalls.length - 1]!)}`,
  `target ≤ 0.2× docker run (${fmt(0.2 * p50(dockerRun))})`,
);
row('baseline: docker run --rm (same hardening)', `p50 ${fmt(p50(dockerRun))}  max ${fmt(dockerRun[dockerRun.length - 1]!)}`);
row('ratio new session / docker run --rm', `${(p50(firstCalls) / p50(dockerRun)).toFixed(3)}×`, 'target ≤ 0.2×');
console.log('');

// --- concurrency ----------------------------------------------------------------
const loadPool = await openSessions(service, workspace, Math.max(...CONCURRENCY_LEVELS), 'bench-load');
if (loadPool.failures.length > 0) throw new Error(`sessions failed to open: ${loadPool.failures.slice(0, 3).join('; ')}`);
console.log(`concurrency: N sessions, each running \`true\` in a loop for ${fmt(loadMs)}`);
const loads = [];
for (const level of CONCURRENCY_LEVELS) {
  const load = await loadSessions(loadPool.sessions, level, loadMs);
  loads.push(load);
  row(
    `${String(level).padStart(2)} session${level === 1 ? ' ' : 's'}`,
    `${load.callsPerSecond.toFixed(1).padStart(6)} calls/s  p50 ${fmt(load.p50)}  p99 ${fmt(load.p99)}`,
    `${(load.callsPerSecond / loads[0]!.callsPerSecond).toFixed(2)}× one session's${level === 8 ? ' (target ≥ 1.6×)' : ''}`,
  );
}
const scaling = await measureScaling({ sessions: loadPool.sessions, many: 8, hostOnce: () => hostSpawnTrue(hostEnv), rounds: scalingRounds, durationMs: 2000 });
row(
  `8 sessions / 1 session, median of ${scalingRounds} back-to-back pairs`,
  `${scaling.sandbox.toFixed(2)}×`,
  `target ≥ 1.6×; machine ${(scaling.machineBusy * 100).toFixed(0)}% busy (all processes)`,
);
row('baseline: host `bash -c true`, 8 loops / 1 loop, same rounds', `${scaling.host.toFixed(2)}×`);
await Promise.allSettled(loadPool.sessions.map((s) => s.close()));
const opened = await openSessions(service, workspace, openCount, 'bench-open');
row(`open ${openCount} sessions at once (+ one \`true\` in each)`, `${fmt(opened.openMs)}, ${opened.failures.length} failed`, 'target: no failure');
for (const failure of opened.failures.slice(0, 5)) console.log(`    ${failure}`);
const closeStart = performance.now();
// An engine under heavy load may fail to remove a container in time: count it, do not stop the run.
const closes = await Promise.allSettled(opened.sessions.map((s) => s.close()));
const closeFailures = closes.filter((close) => close.status === 'rejected').length;
row(`close those ${opened.sessions.length} sessions`, `${fmt(performance.now() - closeStart)}, ${closeFailures} failed`);
console.log('');

// --- throughput ---------------------------------------------------------------
const line = `${'x'.repeat(127)}\n`; // 128 bytes: a MiB holds exactly 8192 lines
const chunk = line.repeat((1 * MiB) / line.length);
const flood = join(workspace, 'flood.txt');
// Written a chunk at a time: holding 256 MB here would blur the memory figures below.
const chunkBytes = Buffer.from(chunk.slice(0, MiB));
const out = await open(flood, 'w');
for (let written = 0; written < FLOOD_BYTES; written += chunkBytes.length) await out.write(chunkBytes);
await out.close();
const mbps = (bytes: number, ms: number) => `${(bytes / MiB / (ms / 1000)).toFixed(0)} MB/s`;

const hostCat = await timeEach(3, () => sh('sh', ['-c', `cat ${flood} > /dev/null`]), 1);
const inContainerCat = await timeEach(3, () => session.run({ command: 'cat flood.txt > /dev/null' }), 1);
const endToEnd = await timeEach(2, () => session.run({ command: 'cat flood.txt' }), 0);
const endToEndPipes = await timeEach(3, () => session.run({ command: 'cat flood.txt', mode: 'pipes' }), 1);
console.log('throughput of 256 MB of text output');
row('toolcell end to end (pty: supervisor → host → pipeline)', `${mbps(FLOOD_BYTES, p50(endToEnd))} (${fmt(p50(endToEnd))})`, 'target ≥ 50 MB/s');
row('toolcell end to end (pipes mode)', `${mbps(FLOOD_BYTES, p50(endToEndPipes))} (${fmt(p50(endToEndPipes))})`, 'target ≥ 50 MB/s');
row('baseline: cat into /dev/null inside the sandbox', `${mbps(FLOOD_BYTES, p50(inContainerCat))} (${fmt(p50(inContainerCat))})`);
row('baseline: cat into /dev/null on the host', `${mbps(FLOOD_BYTES, p50(hostCat))} (${fmt(p50(hostCat))})`);
console.log('');

// --- event loop and memory during four floods ---------------------------------
const floodSessions = await Promise.all(
  [0, 1, 2, 3].map((i) => service.openSession({ sandbox: 'docker', workspaceRoot: workspace, sessionId: `bench-flood-${i}` })),
);
for (const s of floodSessions) await s.run({ command: 'true' });
globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
let rssPeak = rssBefore;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const floodStart = performance.now();
const results = await Promise.all(floodSessions.map((s) => s.run({ command: 'cat flood.txt' })));
const floodMs = performance.now() - floodStart;
delay.disable();
clearInterval(sampler);
await new Promise((resolve) => setTimeout(resolve, 500));
const rssAfter = process.memoryUsage().rss;
const totalBytes = results.reduce((sum, r) => sum + r.totalBytes, 0);
console.log(`four concurrent floods (${(totalBytes / MiB).toFixed(0)} MB in total, ${fmt(floodMs)})`);
row('main-thread event-loop delay p99', `${(delay.percentile(99) / 1e6).toFixed(2)} ms (max ${(delay.max / 1e6).toFixed(2)} ms)`, 'target ≤ 20 ms');
row('aggregate throughput', mbps(totalBytes, floodMs));
row(
  'RSS growth at peak',
  `${((rssPeak - rssBefore) / MiB).toFixed(0)} MB`,
  `bounded by caps (4 × 8 MiB render cap + tails), not ${(totalBytes / MiB).toFixed(0)} MB`,
);
row('RSS growth after the floods', `${((rssAfter - rssBefore) / MiB).toFixed(0)} MB`);
row('characters handed on per flood', `${Math.max(...results.map((r) => r.output.length))}`, 'capped (maxOutputChars 1,000,000)');

for (const s of floodSessions) await s.close();
console.log('');
await runtimeRows();
await session.close();
await rawSession.close();
await service.close();
await backend.close();
await sh('docker', ['rm', '-f', warmId]).catch(() => '');
await rm(workspace, { recursive: true, force: true });
