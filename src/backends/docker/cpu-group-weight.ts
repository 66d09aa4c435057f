import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpuGroupCgroup } from '../session-limits.js';
import { cgroupMount, isV1Controller, isV2 } from './cgroup-mounts.js';

/** cgroup v1's default `cpu.shares` and v2's default `cpu.weight`: a weight of 1 is the kernel's default share. */
const V1_DEFAULT_SHARES = 1024;
const V2_DEFAULT_WEIGHT = 100;

/**
 * A CPU group's (`/toolcell-<group>`, docker-backend.ts's `cgroupParent`)
 * CPU time and weight, in the cgroup files of this host.
 */
export interface CpuGroupControl {
  /** CPU seconds the group's processes have used so far; undefined while the group has no folder (its first container makes it). */
  usageSeconds(group: string): Promise<number | undefined>;
  /** Its weight under contention, as a fraction of the kernel's default (1); a group that is gone is left alone. */
  setWeight(group: string, weight: number): Promise<void>;
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** undefined for a file that is not there (a group without a folder yet, or gone meanwhile). */
async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

async function writeIfThere(path: string, value: string): Promise<void> {
  await writeFile(path, value).catch((error: unknown) => {
    if (!isMissing(error)) throw error;
  });
}

/**
 * The control of this host's cgroups: cgroup v1 (`cpuacct.usage` in the
 * cpuacct hierarchy, `cpu.shares` in the cpu one) or v2 (`cpu.stat`'s
 * `usage_usec`, `cpu.weight`). A string says why there is none (toolcell in a
 * container of its own, without the host's cgroups).
 */
export async function hostCpuGroupControl(mountinfoPath = '/proc/self/mountinfo'): Promise<CpuGroupControl | string> {
  const mounts = await readFile(mountinfoPath, 'utf8');
  const cpuV1 = cgroupMount(mounts, isV1Controller('cpu'));
  if (cpuV1 !== undefined) {
    const acctV1 = cgroupMount(mounts, isV1Controller('cpuacct'));
    if (acctV1 === undefined) return 'no cgroup v1 cpuacct hierarchy is mounted here';
    return {
      usageSeconds: async (group) => {
        const text = await readIfThere(join(acctV1, cpuGroupCgroup(group), 'cpuacct.usage'));
        return text === undefined ? undefined : Number(text.trim()) / 1e9;
      },
      setWeight: (group, weight) => writeIfThere(join(cpuV1, cpuGroupCgroup(group), 'cpu.shares'), String(Math.max(2, Math.round(V1_DEFAULT_SHARES * weight)))),
    };
  }
  const unified = cgroupMount(mounts, isV2);
  if (unified === undefined) return 'no cpu cgroup is mounted here';
  return {
    usageSeconds: async (group) => {
      const text = await readIfThere(join(unified, cpuGroupCgroup(group), 'cpu.stat'));
      const usec = text === undefined ? undefined : /^usage_usec (\d+)$/m.exec(text)?.[1];
      return usec === undefined ? undefined : Number(usec) / 1e6;
    },
    setWeight: (group, weight) => writeIfThere(join(unified, cpuGroupCgroup(group), 'cpu.weight'), String(Math.max(1, Math.round(V2_DEFAULT_WEIGHT * weight)))),
  };
}
