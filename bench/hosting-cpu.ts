/**
 * Where the machine's CPU time goes during one phase of bench/hosting, from
 * /proc and the cgroup v1 cpuacct counters (Linux only): the bench process
 * (the server and tenant B's client; its main thread, the event loop, apart),
 * the attacker client processes, tenant A's sandbox containers, the Docker
 * engine, and the rest of the machine (other work on a shared host). A
 * figure is CPU seconds per second of wall time: 2.00 is both cores of a
 * 2-core machine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Clock ticks per second of /proc's counters (USER_HZ; 100 on every Linux build in use). */
const TICKS = 100;
const ENGINE = /^(dockerd|containerd|containerd-shim.*|runc|docker-proxy|docker-init)$/;

/** utime + stime of a process (all its threads) or one thread, in seconds; 0 when it is gone. */
function statSeconds(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    // The fields after the command name (which may hold spaces) start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** Busy CPU seconds of the whole machine (all but idle and iowait). */
function machineSeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return (total - ticks[3]! - ticks[4]!) / TICKS;
}

/** CPU seconds of the Docker engine's processes (dockerd, containerd, its shims). */
function engineSeconds(): number {
  let seconds = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (ENGINE.test(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) seconds += statSeconds(`/proc/${entry}/stat`);
    } catch {
      // Gone since the listing.
    }
  }
  return seconds;
}

/** CPU seconds of every container in one toolcell CPU group (`/toolcell-<slug>`, a hosting tenant's sessions). */
function cgroupSeconds(group: string): number {
  try {
    return Number(readFileSync(`/sys/fs/cgroup/cpuacct/toolcell-${group}/cpuacct.usage`, 'utf8')) / 1e9;
  } catch {
    return 0; // No container of the group has run yet.
  }
}

interface Reading {
  at: number;
  machine: number;
  bench: number;
  mainThread: number;
  mainThreadWaiting: number;
  attackers: number;
  sandbox: number;
  engine: number;
}

/** CPU seconds per second of wall time, by who spent them, over one phase. */
export interface CpuShares {
  /** The bench process: the server (all its threads) and tenant B's client. */
  bench: number;
  /** Of which the main thread: the server's event loop (and B's client). */
  mainThread: number;
  /**
   * Seconds per second the main thread was ready to run but waited for a CPU (the kernel's
   * schedstat): a busy machine's share of the event loop's delay, as opposed to its own work.
   */
  mainThreadWaiting: number;
  /** The attacker client processes (bench/hosting-attacker.ts), at the niceness they ran at. */
  attackers: number;
  /** Tenant A's sandbox containers (its CPU group). */
  sandbox: number;
  /** dockerd, containerd and the shims. */
  engine: number;
  /** Everything else on the machine (other work on a shared host). */
  other: number;
  /** The machine's cores, for scale. */
  cores: number;
}

/** Starts counting; `stop()` (called while the attackers still run) gives the shares since. */
export function cpuPhase(options: { attackerPids: readonly number[]; sandboxGroup: string }): { stop(): CpuShares } {
  const read = (): Reading => ({
    at: performance.now(),
    machine: machineSeconds(),
    bench: statSeconds(`/proc/${process.pid}/stat`),
    mainThread: statSeconds(`/proc/${process.pid}/task/${process.pid}/stat`),
    mainThreadWaiting: runQueueSeconds(`/proc/${process.pid}/task/${process.pid}/schedstat`),
    attackers: options.attackerPids.reduce((sum, pid) => sum + statSeconds(`/proc/${pid}/stat`), 0),
    sandbox: cgroupSeconds(options.sandboxGroup),
    engine: engineSeconds(),
  });
  const start = read();
  return {
    stop() {
      const end = read();
      const wall = (end.at - start.at) / 1000;
      const rate = (key: keyof Reading): number => Math.max(0, (end[key] - start[key]) / wall);
      const known = rate('bench') + rate('attackers') + rate('sandbox') + rate('engine');
      return {
        bench: rate('bench'),
        mainThread: rate('mainThread'),
        mainThreadWaiting: rate('mainThreadWaiting'),
        attackers: rate('attackers'),
        sandbox: rate('sandbox'),
        engine: rate('engine'),
        other: Math.max(0, rate('machine') - known),
        cores: cpus().length,
      };
    },
  };
}

/** The time a thread spent ready to run but waiting for a CPU: schedstat's second field, in ns (0 where the kernel has none). */
function runQueueSeconds(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return 0;
  }
}

export function describeShares(shares: CpuShares): string {
  const f = (value: number): string => value.toFixed(2);
  return (
    `server+B ${f(shares.bench)} (main thread ${f(shares.mainThread)}, and ${f(shares.mainThreadWaiting)} waiting for a CPU), attackers ${f(shares.attackers)}, ` +
    `A's sandbox ${f(shares.sandbox)}, engine ${f(shares.engine)}, rest of machine ${f(shares.other)} (of ${shares.cores})`
  );
}
