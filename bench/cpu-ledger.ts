/**
 * CPU time spent on sandboxed calls, per place it is spent: this process's
 * threads (main, shell thread, the rest), the Docker engine (dockerd,
 * containerd, the containers' shims) and the containers themselves (their
 * cgroups: supervisor, reapers, commands). Read from /proc and cgroup v1
 * cpuacct, so other load on the machine does not enter the figures, unlike
 * wall-clock throughput. Linux only; a place that cannot be read counts 0.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

const TICK_MS = 10; // USER_HZ is 100 on Linux

export type Ledger = Record<string, number>;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** utime + stime of a /proc stat file, in ms. */
function statMs(path: string): number {
  const stat = read(path);
  if (!stat) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

function comm(path: string): string {
  return (read(path) ?? '').trim();
}

function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (comm(`/proc/${entry}/comm`) === name) pids.push(Number(entry));
  }
  return pids;
}

function cmdline(pid: number): string {
  return (read(`/proc/${pid}/cmdline`) ?? '').replaceAll('\0', ' ');
}

/**
 * Takes readings of every place. `containerIds` are the full ids of the
 * containers whose cgroups and shims count; `shellThreads` the thread ids
 * that appeared when the shell service started (Node 20 does not name
 * worker threads, so they are told apart by when they were born).
 */
export function readLedger(containerIds: readonly string[], shellThreads: ReadonlySet<string>): Ledger {
  if (threadId !== 0) throw new Error('readLedger runs on the main thread');
  const ledger: Ledger = { 'host: main thread': 0, 'host: shell thread': 0, 'host: other threads': 0 };
  for (const tid of readdirSync('/proc/self/task')) {
    const ms = statMs(`/proc/self/task/${tid}/stat`);
    if (Number(tid) === process.pid) ledger['host: main thread']! += ms;
    else if (shellThreads.has(tid)) ledger['host: shell thread']! += ms;
    else ledger['host: other threads']! += ms;
  }
  ledger['engine: dockerd'] = pidsNamed('dockerd').reduce((sum, pid) => sum + statMs(`/proc/${pid}/stat`), 0);
  ledger['engine: containerd'] = pidsNamed('containerd').reduce((sum, pid) => sum + statMs(`/proc/${pid}/stat`), 0);
  const shims = pidsNamed('containerd-shim').concat(pidsNamed('containerd-shim-runc-v2'), pidsNamed('containerd-shim-'));
  let shimMs = 0;
  for (const pid of new Set(shims)) {
    const line = cmdline(pid);
    if (containerIds.some((id) => line.includes(id))) shimMs += statMs(`/proc/${pid}/stat`);
  }
  ledger['engine: shims'] = shimMs;
  let containerMs = 0;
  for (const id of containerIds) {
    const usage = read(`/sys/fs/cgroup/cpuacct/docker/${id}/cpuacct.usage`);
    if (usage) containerMs += Number(usage) / 1e6;
  }
  ledger['containers'] = containerMs;
  const cpu = (read('/proc/stat') ?? '').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  ledger['machine: busy (all processes)'] = (cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0)) * TICK_MS;
  return ledger;
}

/** This process's thread ids. */
export function threadIds(): Set<string> {
  return new Set(readdirSync('/proc/self/task'));
}

/** later − earlier, per place. */
export function spent(earlier: Ledger, later: Ledger): Ledger {
  return Object.fromEntries(Object.keys(later).map((key) => [key, later[key]! - (earlier[key] ?? 0)]));
}
