/**
 * bench/sandbox-cpu: where the CPU of a warm sandboxed `true` goes, and what
 * that allows N concurrent sessions on this machine. For 1 and N sessions
 * each running `true` in a loop, it prints calls/s, the CPU per call in each
 * place (this process's threads, the Docker engine, the containers) and the
 * ceiling that CPU sets: cores / CPU per call. With one session a call is
 * bound by latency; with many, by CPU, so the best possible ratio of N
 * sessions' calls/s to one session's is
 *   (cores / CPU per call) / (one session's calls/s)
 * whatever other load the machine carries.
 *
 * It also runs the unsandboxed baseline the same way: `bash -c true` through
 * child_process, 1 and N loops at once, with its CPU per call (this process
 * plus its children).
 *
 * On a machine shared with other work, `--nice=-15` (as root) gives this
 * process and the sessions' containers a larger share of the CPU, to
 * approach the figures of an idle machine.
 *
 *   npm run build && node dist/bench/sandbox-cpu.js -- [--seconds S] [--sessions N] [--rounds R] [--nice=-15]
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { LABELS } from '../src/backends/docker/labels.js';
import { ShellService } from '../src/shell/shell-service.js';
import { readLedger, spent, threadIds, type Ledger } from './cpu-ledger.js';
import { hostSpawnTrue } from './host-spawn.js';
import { loadSessions, openSessions } from './sandbox-concurrency.js';
import { fmt } from './stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    sessions: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    nice: { type: 'string' },
  },
});
const loadMs = Number(values.seconds) * 1000;
const many = Number(values.sessions);
const rounds = Number(values.rounds);
const cores = availableParallelism();

const workspace = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-bench-cpu-')));
const before = threadIds();
const service = await ShellService.create({});
const shellThreads = new Set([...threadIds()].filter((tid) => !before.has(tid)));
const pool = await openSessions(service, workspace, many, `bench-cpu-${process.pid}`);
if (pool.failures.length > 0) throw new Error(`sessions failed to open: ${pool.failures.slice(0, 3).join('; ')}`);
const containers = await new Docker().listContainers({ filters: { label: [`${LABELS.ownerPid}=${process.pid}`] } });
const ids = containers.map((c) => c.Id);
if (values.nice !== undefined) {
  // Processes the containers start later (reapers, commands) inherit it.
  for (const id of ids)
    for (const pid of readFileSync(`/sys/fs/cgroup/cpuacct/docker/${id}/tasks`, 'utf8').trim().split('\n').filter(Boolean))
      setPriority(Number(pid), Number(values.nice));
}

/** CPU of this process and its reaped children, ms. */
function ownAndChildrenMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
}
const hostEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/tmp', TERM: 'xterm-256color', LANG: 'C.UTF-8' };
async function hostLoops(count: number, durationMs: number): Promise<{ rate: number; cpuPerCall: number }> {
  let calls = 0;
  const cpu = ownAndChildrenMs();
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    Array.from({ length: count }, async () => {
      while (performance.now() < deadline) {
        await hostSpawnTrue(hostEnv);
        calls++;
      }
    }),
  );
  return { rate: calls / ((performance.now() - start) / 1000), cpuPerCall: (ownAndChildrenMs() - cpu) / calls };
}

console.log(`bench/sandbox-cpu: Node ${process.version}, ${cores} cores, ${fmt(loadMs)} per figure, ${rounds} rounds, ${ids.length} containers`);
const rows: Array<{ sessions: number; rate: number; perCall: Ledger }> = [];
const hostRows: Array<{ one: number; many: number }> = [];
for (let round = 0; round < rounds; round++) {
  const hostOne = await hostLoops(1, loadMs);
  const hostMany = await hostLoops(many, loadMs);
  hostRows.push({ one: hostOne.rate, many: hostMany.rate });
  console.log('');
  console.log(
    `host \`bash -c true\` (child_process, no sandbox): 1 loop ${hostOne.rate.toFixed(1)} calls/s, ${hostOne.cpuPerCall.toFixed(2)} ms CPU/call; ` +
      `${many} loops ${hostMany.rate.toFixed(1)} calls/s, ${hostMany.cpuPerCall.toFixed(2)} ms CPU/call: ${(hostMany.rate / hostOne.rate).toFixed(2)}×`,
  );
  for (const level of [1, many]) {
    const start = readLedger(ids, shellThreads);
    const load = await loadSessions(pool.sessions, level, loadMs);
    const used = spent(start, readLedger(ids, shellThreads));
    const perCall = Object.fromEntries(Object.entries(used).map(([k, v]) => [k, v / load.calls]));
    rows.push({ sessions: level, rate: load.callsPerSecond, perCall });
    const ours = Object.entries(perCall)
      .filter(([k]) => !k.startsWith('machine'))
      .reduce((sum, [, v]) => sum + v, 0);
    const seconds = load.calls / load.callsPerSecond;
    const busy = used['machine: busy (all processes)']! / seconds / 1000;
    console.log('');
    console.log(
      `${level} session${level === 1 ? '' : 's'}: ${load.callsPerSecond.toFixed(1)} calls/s, p50 ${fmt(load.p50)}, p99 ${fmt(load.p99)}; ` +
        `cores busy: ours ${((ours * load.calls) / seconds / 1000).toFixed(2)}, whole machine ${busy.toFixed(2)} of ${cores}`,
    );
    for (const [place, ms] of Object.entries(perCall)) if (!place.startsWith('machine')) console.log(`  ${place.padEnd(24)} ${ms.toFixed(2)} ms/call`);
    console.log(`  ${'sum of the above'.padEnd(24)} ${ours.toFixed(2)} ms/call → ceiling ${((cores * 1000) / ours).toFixed(0)} calls/s on ${cores} idle cores`);
  }
}
const one = rows.filter((r) => r.sessions === 1);
const best = (r: { perCall: Ledger }) =>
  (cores * 1000) /
  Object.entries(r.perCall)
    .filter(([k]) => !k.startsWith('machine'))
    .reduce((s, [, v]) => s + v, 0);
console.log('');
for (const [i, r] of one.entries()) {
  const loaded = rows.filter((x) => x.sessions === many)[i]!;
  console.log(
    `round ${i + 1}: ${many} sessions / 1 session = ${(loaded.rate / r.rate).toFixed(2)}× (target ≥ 1.6×); CPU ceiling / 1 session = ${(best(loaded) / r.rate).toFixed(2)}×; ` +
      `host spawn, ${many} loops / 1 loop = ${(hostRows[i]!.many / hostRows[i]!.one).toFixed(2)}×`,
  );
}
await Promise.allSettled(pool.sessions.map((s) => s.close()));
await service.close();
await rm(workspace, { recursive: true, force: true });
