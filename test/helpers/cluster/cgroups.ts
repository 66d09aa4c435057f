/**
 * The nodes' cgroups: node-start.sh puts each node's whole process tree
 * (dockerd, containerd, shims) in /<prefix>-<node> of every hierarchy, and
 * its engine puts the containers below it (--cgroup-parent). Killing a
 * node is killing what is in that tree, frozen first so nothing forks
 * between the listing and the kill.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from './run-command.js';

export const CGROUP_ROOT = '/sys/fs/cgroup';

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => join(dir, entry.name));
}

/** Every cgroup under `dir` and `dir` itself, deepest first (the order rmdir needs). */
export async function cgroupTree(dir: string): Promise<string[]> {
  const below: string[] = [];
  for (const child of await subdirs(dir)) below.push(...(await cgroupTree(child)));
  return [...below, dir];
}

async function pidsIn(cgroup: string): Promise<number[]> {
  const text = await readFile(join(cgroup, 'cgroup.procs'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

/** The cgroups named `name` at the top of every hierarchy (cpu, memory, pids, freezer, systemd, unified, …). */
export async function topCgroups(matches: (name: string) => boolean): Promise<string[]> {
  const tops: string[] = [];
  for (const hierarchy of await subdirs(CGROUP_ROOT)) {
    for (const dir of await subdirs(hierarchy)) if (matches(dir.slice(hierarchy.length + 1))) tops.push(dir);
  }
  return tops;
}

/** SIGKILLs every process in these cgroup trees and waits until they are empty; returns how many it killed. */
export async function killCgroupTrees(tops: string[]): Promise<number> {
  const freezers = tops.filter((dir) => dir.startsWith(`${CGROUP_ROOT}/freezer/`));
  for (const dir of freezers) await writeFile(join(dir, 'freezer.state'), 'FROZEN').catch(() => undefined);
  const pids = new Set<number>();
  for (const top of tops) for (const cgroup of await cgroupTree(top)) for (const pid of await pidsIn(cgroup)) pids.add(pid);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  // A frozen task takes its SIGKILL when thawed.
  for (const dir of freezers) await writeFile(join(dir, 'freezer.state'), 'THAWED').catch(() => undefined);
  await waitFor(
    'the killed processes to exit',
    async () => {
      for (const top of tops) for (const cgroup of await cgroupTree(top)) if ((await pidsIn(cgroup)).length > 0) return undefined;
      return true;
    },
    30_000,
  );
  return pids.size;
}
