import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cpuGroupCgroup } from '../session-limits.js';
import { processCgroup } from './process-cgroup.js';

/** The CFS period the quota is given in: the kernel's default, 100 ms. */
const PERIOD_US = 100_000;

/** A cgroup v1 hierarchy holding the cpu controller, and the unified (v2) hierarchy, as mountinfo names them. */
const isV1Cpu = (type: string, superOptions: string) => type === 'cgroup' && superOptions.split(',').includes('cpu');
const isV2 = (type: string) => type === 'cgroup2';

/**
 * Caps what a CPU group's containers may use together: the CFS quota of
 * their parent cgroup (`/toolcell-<group>`), found from the cgroup of one
 * of them (`pid`, its first process as the engine reports it, on this
 * host), cgroup v1 (`cpu.cfs_quota_us`) or v2 (`cpu.max`). The parent's
 * weight gives each group one share under contention; this is the ceiling
 * also without contention: a hosting tenant with four busy sessions gets
 * its `totalCpus`, not four CPUs. Written before each start of one of the
 * group's containers (by the group's name: cgroup v1 refuses a member's
 * quota above its group's, so a raised total must be there first) and
 * after it, found from the container (the group's first container makes
 * its folder), so a changed value applies from the next start.
 *
 * Resolves with why it could not (no container of the group yet, without
 * `pid`; toolcell in a container of its own,
 * without the host's /proc or with /sys/fs/cgroup read-only; a runtime
 * that places the container elsewhere), or undefined once written. It
 * never writes anywhere but a parent named for the group.
 */
export async function capCpuGroup(options: { group: string; cpus: number; pid?: number }): Promise<string | undefined> {
  const quota = Math.max(1000, Math.round(options.cpus * PERIOD_US));
  try {
    const found = options.pid !== undefined ? await groupOfProcess(options.pid, options.group) : await groupByName(options.group);
    if (typeof found === 'string') return found;
    if (found.v1) {
      await writeFile(join(found.dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      await writeFile(join(found.dir, 'cpu.cfs_quota_us'), String(quota));
    } else {
      await writeFile(join(found.dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
    }
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

interface GroupDir {
  dir: string;
  v1: boolean;
}

/** The group's folder as the parent of `pid`'s cpu cgroup, or why not. */
async function groupOfProcess(pid: number, group: string): Promise<GroupDir | string> {
  const cgroup = await processCgroup(pid, 'cpu');
  if (cgroup === undefined) return 'its container has no cpu cgroup here';
  const root = cgroupMount(await readFile('/proc/self/mountinfo', 'utf8'), cgroup.v1 ? isV1Cpu : isV2);
  if (root === undefined) return cgroup.v1 ? 'no cgroup v1 cpu hierarchy is mounted here' : 'its container has no cpu cgroup here';
  const parent = dirname(cgroup.path);
  return parent === cpuGroupCgroup(group) ? { dir: join(root, parent), v1: cgroup.v1 } : `its container is not in ${cpuGroupCgroup(group)} (${cgroup.path})`;
}

/** The group's folder where this host mounts the cpu controller, if it exists yet (its first container makes it). */
async function groupByName(group: string): Promise<GroupDir | string> {
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  const v1 = cgroupMount(mounts, isV1Cpu);
  const root = v1 ?? cgroupMount(mounts, isV2);
  if (root === undefined) return 'no cpu cgroup is mounted here';
  const dir = join(root, cpuGroupCgroup(group));
  return existsSync(dir) ? { dir, v1: v1 !== undefined } : 'the group has no container yet';
}

/** The mount point of the first cgroup filesystem `matches` accepts (mountinfo: fields, " - ", type, source, super options). */
function cgroupMount(mountinfo: string, matches: (type: string, superOptions: string) => boolean): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const [type, , superOptions] = after.split(' ');
    if (type !== undefined && matches(type, superOptions ?? '')) return before.split(' ')[4];
  }
  return undefined;
}
