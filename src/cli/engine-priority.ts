import { readdir, readFile, writeFile } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import { join } from 'node:path';
import { engineAddress } from '../backends/docker/engine.js';
import { errorMessage } from '../errors.js';

/**
 * The Docker engine's nice on a hosting server (`serve --tenants`,
 * `--engine-nice`). Starting a hardened container costs the engine and the
 * kernel about 0.6 CPU-seconds (runc, containerd and its shims, dockerd,
 * mounts), none of it in any tenant's cgroup, so no tenant's CPU share
 * covers it: a tenant opening and closing sessions in a loop took the CPU
 * from every other tenant's running calls (B's p99 4.3-4.9× with session
 * churn alone; with the engine at nice 10, 1.8-3.4×, docs/benchmarks.md).
 * Below the calls, new sessions wait for the CPU instead of running calls.
 */
export const HOSTING_ENGINE_NICE = 10;

/** A process of the engine: its pid and its name (`comm`, which the kernel cuts at 15 characters). */
export interface EngineProcess {
  pid: number;
  name: string;
}

/** dockerd, containerd, and containerd's shims (`containerd-shim-runc-v2` reads `containerd-shim`), which start runc. */
const isEngineName = (name: string): boolean => name === 'dockerd' || name === 'containerd' || name.startsWith('containerd-shim');

/** The engine's processes this host's `/proc` shows (none where toolcell runs in a container of its own). */
export async function findEngineProcesses(procRoot = '/proc'): Promise<EngineProcess[]> {
  const found: EngineProcess[] = [];
  for (const entry of await readdir(procRoot)) {
    if (!/^\d+$/.test(entry)) continue;
    const name = await readFile(join(procRoot, entry, 'comm'), 'utf8').then(
      (text) => text.trim(),
      () => '', // gone meanwhile
    );
    if (isEngineName(name)) found.push({ pid: Number(entry), name });
  }
  return found;
}

/** What lowering did, for the start-up line, or why it could not. */
export type EngineLowering = { summary: string } | { problem: string };

/**
 * Lowers `processes` to nice `nice` where they run above it: every thread
 * (Linux's nice is per thread, and threads, shims and runc started later
 * inherit it from the thread that starts them) and, where the kernel groups
 * processes by session (autogroup, for processes in the root cgroup, as an
 * engine started by hand or by a script is), the session's group, without
 * which a thread's nice only weighs inside its session. A session the
 * server shares with the engine keeps its nice: it would lower the server.
 * Never raises a priority.
 */
export async function lowerEnginePriority(options: { nice: number; processes: readonly EngineProcess[]; procRoot?: string }): Promise<EngineLowering> {
  const { nice, processes } = options;
  const procRoot = options.procRoot ?? '/proc';
  if (processes.length === 0)
    return {
      problem: `the Docker engine keeps its priority: no dockerd or containerd in ${procRoot} (an engine on another host, or this server in a container)`,
    };
  const ownGroup = autogroupName(await readFile(join(procRoot, 'self', 'autogroup'), 'utf8').catch(() => ''));
  const groupsOn = (await readFile(join(procRoot, 'sys', 'kernel', 'sched_autogroup_enabled'), 'utf8').catch(() => '0')).trim() === '1';
  const lowered = new Set<string>();
  const groups = new Set<string>();
  const failures: string[] = [];
  let sharedGroup = false;
  for (const process of processes) {
    const tids = await readdir(join(procRoot, String(process.pid), 'task')).catch(() => [] as string[]);
    for (const tid of tids) {
      try {
        if (getPriority(Number(tid)) < nice) setPriority(Number(tid), nice);
        lowered.add(process.name);
      } catch (error) {
        // ESRCH: a thread that ended meanwhile; anything else (EPERM without root) is said.
        if (!isNoSuchProcess(error)) failures.push(`${process.name} (${process.pid}): ${errorMessage(error)}`);
      }
    }
    if (!groupsOn) continue;
    const file = join(procRoot, String(process.pid), 'autogroup');
    const line = await readFile(file, 'utf8').catch(() => '');
    const group = autogroupName(line);
    if (group === '' || groups.has(group)) continue;
    if (group === ownGroup) {
      sharedGroup = true;
      continue;
    }
    groups.add(group);
    if (autogroupNice(line) >= nice) continue;
    await writeFile(file, String(nice)).catch((error: unknown) => failures.push(`${process.name} (${process.pid})'s session: ${errorMessage(error)}`));
  }
  if (failures.length > 0) return { problem: `the Docker engine keeps its priority: ${failures.slice(0, 3).join('; ')}` };
  const names = [...lowered].sort().join(', ');
  const shared = sharedGroup ? ` (its session is this server's, so only its threads' nice changed: start the engine in a session of its own)` : '';
  return {
    summary: `the Docker engine (${names}) runs at nice ${nice}, below tenants' calls: starting tenants' containers waits for the CPU behind their running calls${shared}`,
  };
}

/**
 * The hosting server's start: lowers the engine DOCKER_HOST names when it
 * is on this host (a unix socket, the default), else says why not.
 */
export async function lowerLocalEngine(nice: number): Promise<EngineLowering> {
  const address = engineAddress();
  if (!address.startsWith('unix://')) return { problem: `the Docker engine keeps its priority: DOCKER_HOST (${address}) is not a socket on this host` };
  return lowerEnginePriority({ nice, processes: await findEngineProcesses() });
}

/** os.setPriority's error for a thread or process that is gone: a SystemError whose `info.code` is ESRCH. */
function isNoSuchProcess(error: unknown): boolean {
  const { code, info } = error as NodeJS.ErrnoException & { info?: { code?: string } };
  return code === 'ESRCH' || info?.code === 'ESRCH';
}

/** `/autogroup-33141 nice 0` → `/autogroup-33141`. */
function autogroupName(line: string): string {
  return line.trim().split(/\s+/)[0] ?? '';
}

/** `/autogroup-33141 nice 0` (a `/proc/<pid>/autogroup` line) → 0. */
export function autogroupNice(line: string): number {
  const match = /\bnice\s+(-?\d+)/.exec(line);
  return match ? Number(match[1]) : 0;
}
