/**
 * Real CPU groups for tests: `/toolcell-<group>` made by hand where this
 * host mounts its cgroups (v1: the cpu and cpuacct hierarchies; v2: the
 * unified one), as docker-backend.ts's containers make it, so that a test
 * can put its own processes in one. Needs root.
 */
import type { ExecutionContext } from 'ava';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cgroupMount, isV1Controller, isV2 } from '../../src/backends/docker/cgroup-mounts.js';
import { cpuGroupCgroup } from '../../src/backends/session-limits.js';

export interface TestCpuGroup {
  /** The group's name (cpuGroupCgroup's argument). */
  name: string;
  /** Moves a process into the group. */
  add(pid: number): Promise<void>;
  /** Its weight as the kernel has it, 1 being the default (v1 cpu.shares 1024, v2 cpu.weight 100). */
  kernelWeight(): Promise<number>;
}

/** The folders of a group in the hierarchies that count and weigh CPU time, and its weight file with the default value. */
async function groupFolders(name: string): Promise<{ dirs: string[]; weightFile: string; defaultWeight: number }> {
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  const cpu = cgroupMount(mounts, isV1Controller('cpu'));
  if (cpu !== undefined) {
    const acct = cgroupMount(mounts, isV1Controller('cpuacct'))!;
    const dirs = [...new Set([cpu, acct])].map((root) => join(root, cpuGroupCgroup(name)));
    return { dirs, weightFile: join(cpu, cpuGroupCgroup(name), 'cpu.shares'), defaultWeight: 1024 };
  }
  const unified = cgroupMount(mounts, isV2)!;
  return { dirs: [join(unified, cpuGroupCgroup(name))], weightFile: join(unified, cpuGroupCgroup(name), 'cpu.weight'), defaultWeight: 100 };
}

/** Makes the group; removed at teardown (its processes must be gone by then: the test kills them in an earlier teardown). */
export async function makeCpuGroup(t: ExecutionContext, name: string): Promise<TestCpuGroup> {
  const { dirs, weightFile, defaultWeight } = await groupFolders(name);
  for (const dir of dirs) await mkdir(dir, { recursive: true });
  t.teardown(async () => {
    for (const dir of dirs) {
      // A killed process leaves its cgroup a moment after the kill.
      for (let tries = 0; tries < 100; tries++) {
        const removed = await rmdir(dir).then(
          () => true,
          (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
        );
        if (removed) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });
  return {
    name,
    add: async (pid) => {
      for (const dir of dirs) await writeFile(join(dir, 'cgroup.procs'), String(pid));
    },
    kernelWeight: async () => Number((await readFile(weightFile, 'utf8')).trim()) / defaultWeight,
  };
}
