/**
 * Where this host mounts its cgroup filesystems, from /proc/self/mountinfo:
 * a cgroup v1 hierarchy per controller (or per group of controllers, `cpu,cpuacct`),
 * or the unified (v2) one holding them all.
 */

/** Accepts a mount by its filesystem type and super options. */
export type CgroupMountMatch = (type: string, superOptions: string) => boolean;

/** A cgroup v1 hierarchy holding `controller` (`cpu`, `cpuacct`, `memory`). */
export const isV1Controller =
  (controller: string): CgroupMountMatch =>
  (type, superOptions) =>
    type === 'cgroup' && superOptions.split(',').includes(controller);

/** The unified (v2) hierarchy. */
export const isV2: CgroupMountMatch = (type) => type === 'cgroup2';

/** The mount point of the first cgroup filesystem `matches` accepts (mountinfo: fields, " - ", type, source, super options). */
export function cgroupMount(mountinfo: string, matches: CgroupMountMatch): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const [type, , superOptions] = after.split(' ');
    if (type !== undefined && matches(type, superOptions ?? '')) return before.split(' ')[4];
  }
  return undefined;
}
