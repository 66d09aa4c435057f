import { readFile } from 'node:fs/promises';

/** Where a process sits for one controller: its path in that controller's cgroup v1 hierarchy, or its cgroup v2 path. */
export interface ProcessCgroup {
  v1: boolean;
  path: string;
}

/**
 * The cgroup of process `pid` (a container's first process, as the engine
 * reports it, on this host) for `controller` (`memory`, `cpu`), from
 * /proc/<pid>/cgroup: the v1 hierarchy holding that controller where there
 * is one, else the unified (v2) hierarchy's `0::` line. Undefined when
 * neither is there; throws when the process cannot be read (gone, or in
 * another pid namespace).
 */
export async function processCgroup(pid: number, controller: string): Promise<ProcessCgroup | undefined> {
  const lines = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).split('\n');
  const v1 = lines.map((line) => line.split(':')).find((fields) => fields[1]?.split(',').includes(controller));
  if (v1?.[2] !== undefined) return { v1: true, path: v1[2] };
  const v2 = lines.find((line) => line.startsWith('0::'))?.slice(3);
  return v2 !== undefined ? { v1: false, path: v2 } : undefined;
}
