import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { formatCpuList, parseCpuList } from '../contracts/cpu-list.js';
import { errorMessage } from '../errors.js';

/**
 * `serve --sandbox-cpus LIST`: the server moves itself off the sandboxes'
 * CPUs. On a host whose cores tenants' commands keep busy, every call of
 * every tenant needs the server's threads (the event loop, the shell
 * thread, the file-tool workers) to get a CPU in turn; sharing the cores
 * with the sandboxes, they wait behind them (docs/benchmarks.md: under
 * bench/hosting's nine attacks B's p99 was 7-9× its idle figure unsplit,
 * 2.5-3.5× split, on a machine of two CPUs). Every
 * thread the process has is moved (`taskset -a`); threads made later
 * inherit their maker's CPUs, and so do the processes it starts.
 */

const run = promisify(execFile);

/** The CPUs a process (or one of its threads: `<pid>/task/<tid>`) may run on, from its Cpus_allowed_list. */
export async function allowedCpus(pid: number | string = 'self'): Promise<number[]> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(status)?.[1];
  const cpus = list !== undefined ? parseCpuList(list) : 'is missing';
  if (typeof cpus === 'string') throw new Error(`/proc/${pid}/status: Cpus_allowed_list ${cpus}`);
  return cpus;
}

/** The machine's online CPUs (/sys), else 0…n-1 as Node counts them. */
async function onlineCpus(): Promise<number[]> {
  try {
    const cpus = parseCpuList((await readFile('/sys/devices/system/cpu/online', 'utf8')).trim());
    if (typeof cpus !== 'string') return cpus;
  } catch {
    // No /sys: count instead.
  }
  return Array.from({ length: availableParallelism() }, (_, cpu) => cpu);
}

/**
 * Whether the Docker engine that DOCKER_HOST names is on another machine (TCP
 * or SSH to a host that is not this one): its sandboxes then take none of
 * this machine's CPUs. A Unix socket, or TCP or SSH to a loopback address
 * (`tcp://127.0.0.1:2375`, `tcp://localhost:2375`, `tcp://[::1]:2375`), is
 * an engine here, whose sandboxes share these CPUs.
 */
export function engineIsRemote(dockerHost: string | undefined = process.env['DOCKER_HOST']): boolean {
  if (dockerHost === undefined || dockerHost === '' || dockerHost.startsWith('unix://')) return false;
  let hostname: string;
  try {
    hostname = new URL(dockerHost).hostname.toLowerCase();
  } catch {
    return true; // Not a URL the docker client would take either: nothing says the engine is here.
  }
  return !isLoopback(hostname);
}

/** localhost, 127.0.0.0/8 or ::1, as a URL's hostname spells them. */
function isLoopback(hostname: string): boolean {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  if (hostname === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** Why the split was not made: a list the machine cannot honour (`usage`), or the move itself failed. */
export interface CpuSplitProblem {
  problem: string;
  usage: boolean;
}

export interface ServerCpus {
  /** The sandboxes' CPUs, canonical (`1`, `2-3`). */
  sandbox: string;
  /** What was done, for the server's start-up line. */
  summary: string;
}

/**
 * Moves this process (each of its threads) onto the CPUs it may use that
 * are not the sandboxes'. Refused, with what is wrong, when the list names a
 * CPU this machine lacks or would leave the server none; nothing is changed
 * then. Checked after: every thread's Cpus_allowed_list.
 */
export async function keepServerOffCpus(sandboxList: string): Promise<ServerCpus | CpuSplitProblem> {
  const sandbox = parseCpuList(sandboxList);
  if (typeof sandbox === 'string') return { problem: `--sandbox-cpus ${sandboxList} ${sandbox}`, usage: true };
  const canonical = formatCpuList(sandbox);
  if (engineIsRemote()) {
    return {
      sandbox: canonical,
      summary: `sandboxes on CPU ${canonical} of the engine's machine (DOCKER_HOST); this server's CPUs unchanged`,
    };
  }
  const online = new Set(await onlineCpus());
  const missing = sandbox.filter((cpu) => !online.has(cpu));
  if (missing.length > 0)
    return {
      problem: `--sandbox-cpus ${canonical} names CPU ${formatCpuList(missing)}, which this machine lacks (it has ${formatCpuList(online)})`,
      usage: true,
    };
  const mine = await allowedCpus();
  const taken = new Set(sandbox);
  const rest = mine.filter((cpu) => !taken.has(cpu));
  if (rest.length === 0) {
    return {
      problem: `--sandbox-cpus ${canonical} leaves this server no CPU of its own (it may run on ${formatCpuList(mine)}): name fewer, so that the server's threads never wait behind tenants' commands`,
      usage: true,
    };
  }
  const server = formatCpuList(rest);
  if (rest.length < mine.length) {
    try {
      await run('taskset', ['--all-tasks', '--pid', '--cpu-list', server, String(process.pid)]);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'taskset (util-linux) is not installed' : errorMessage(error);
      return { problem: `--sandbox-cpus ${canonical}: cannot move this server onto CPU ${server}: ${reason}`, usage: false };
    }
    const strays = await threadsOutside(new Set(rest));
    if (strays.length > 0)
      return { problem: `--sandbox-cpus ${canonical}: threads ${strays.join(', ')} of this server still run on the sandboxes' CPUs`, usage: false };
  }
  return { sandbox: canonical, summary: `sandboxes on CPU ${canonical}, this server on CPU ${server}` };
}

/** Threads of this process allowed onto a CPU outside `cpus` (a thread that ended meanwhile is none). */
async function threadsOutside(cpus: ReadonlySet<number>): Promise<string[]> {
  const strays: string[] = [];
  for (const tid of await readdir('/proc/self/task')) {
    const allowed = await allowedCpus(`self/task/${tid}`).catch(() => []);
    if (allowed.some((cpu) => !cpus.has(cpu))) strays.push(tid);
  }
  return strays;
}
