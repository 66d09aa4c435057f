/**
 * Removes everything a cluster harness made, found by its name prefix, so
 * that it also works after the harness crashed or was killed: every process
 * of the nodes' cgroups (dockerd, containerd, shims, containers), the loop
 * devices their tests attached, the cgroups, the network namespaces (with
 * them the veths, the bridge, and every iptables rule the nodes' engines
 * wrote, which live in those namespaces), and the state folder. The
 * machine's own engine is not asked anything: the nodes' mounts lived in
 * their own mount namespaces and went with their last process.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CLUSTER_PREFIX, NODE_TOOLCELL_DIR, STATE_ROOT } from './layout.js';
import { cgroupTree, killCgroupTrees, topCgroups } from './cgroups.js';
import { runCommand, tryCommand, waitFor } from './run-command.js';

/** Left in the state folder when the harness made NODE_TOOLCELL_DIR (an empty mount point) on the machine. */
export const MADE_TOOLCELL_DIR_MARK = join(STATE_ROOT, 'made-var-lib-toolcell');

const ours = (name: string): boolean => name.startsWith(`${CLUSTER_PREFIX}-`);

/** The (device, inode) of every file in the nodes' toolcell folders: where tenant disk images live. */
async function nodeFiles(): Promise<Set<string>> {
  const found = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const info = await stat(path, { bigint: true }).catch(() => undefined);
        if (info !== undefined) found.add(`${major(info.dev)}:${minor(info.dev)}/${info.ino}`);
      }
    }
  };
  for (const node of await readdir(STATE_ROOT).catch(() => [])) await walk(join(STATE_ROOT, node, 'toolcell'));
  return found;
}

const major = (dev: bigint) => Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
const minor = (dev: bigint) => Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));

/**
 * Loop devices whose backing file is one of the nodes' files. Matched by
 * device and inode, since a backing path is named as the mount namespace
 * that attached it saw it (a node's, gone by now).
 */
export async function clusterLoopDevices(): Promise<string[]> {
  const files = await nodeFiles();
  if (files.size === 0) return [];
  return [...(await loopBackings())].filter(([, backing]) => files.has(backing)).map(([device]) => device);
}

/**
 * Every attached loop device and its backing file as `maj:min/inode`. The
 * machine is shared: a device number the cluster freed may be attached again
 * by someone else at once, so a device is the cluster's only while its
 * backing file is.
 */
export async function loopBackings(): Promise<Map<string, string>> {
  const { stdout } = await tryCommand('losetup', ['--list', '--json', '--output', 'NAME,BACK-INO,BACK-MAJ:MIN']);
  const listed = stdout.trim() === '' ? [] : ((JSON.parse(stdout) as { loopdevices?: Record<string, unknown>[] }).loopdevices ?? []);
  return new Map(listed.map((device) => [String(device.name), `${String(device['back-maj:min'] ?? '').trim()}/${String(device['back-ino'])}`]));
}

async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  return table
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((target) => target === dir || target.startsWith(`${dir}/`));
}

/** What was found and removed, one line each (empty when there was nothing). */
export async function removeClusterLeftovers(): Promise<string[]> {
  const removed: string[] = [];
  const tops = await topCgroups(ours);
  if (tops.length > 0) removed.push(`${await killCgroupTrees(tops)} processes in ${tops.length} cgroups`);

  const { stdout } = await runCommand('ip', ['netns', 'list']);
  const namespaces = stdout
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter(ours);
  for (const netns of namespaces) {
    // Whatever else still runs in it (a test client in the hub).
    const pids = (await tryCommand('ip', ['netns', 'pids', netns])).stdout.split('\n').filter(Boolean).map(Number);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }

  const backings = await loopBackings();
  for (const device of await clusterLoopDevices()) {
    // The filesystems on it were in the nodes' mount namespaces, which are going: it detaches. A
    // device still in use when asked detaches once its last user is gone (autoclear): wait for that.
    const ours = backings.get(device);
    await waitFor(
      `${device} to detach`,
      async () => {
        await tryCommand('losetup', ['-d', device]);
        return (await loopBackings()).get(device) !== ours ? true : undefined;
      },
      30_000,
      250,
    );
    removed.push(`loop device ${device}`);
  }

  for (const top of tops) {
    for (const cgroup of await cgroupTree(top)) await rmdir(cgroup).catch(() => undefined);
  }

  for (const netns of namespaces) {
    await runCommand('ip', ['netns', 'delete', netns]);
    removed.push(`network namespace ${netns}`);
  }

  if (existsSync(MADE_TOOLCELL_DIR_MARK)) {
    const entries = await readdir(NODE_TOOLCELL_DIR).catch(() => ['?']);
    if (entries.length === 0 && (await mountsUnder(NODE_TOOLCELL_DIR)).length === 0) {
      await rmdir(NODE_TOOLCELL_DIR);
      removed.push(`empty mount point ${NODE_TOOLCELL_DIR}`);
    }
  }

  if (existsSync(STATE_ROOT)) {
    const mounted = await mountsUnder(STATE_ROOT);
    if (mounted.length > 0) throw new Error(`refusing to delete ${STATE_ROOT}: still mounted on the machine: ${mounted.join(', ')}`);
    if (!(await stat(STATE_ROOT)).isDirectory()) throw new Error(`${STATE_ROOT} is not a folder`);
    await rm(STATE_ROOT, { recursive: true, force: true, maxRetries: 3 });
    removed.push(`state folder ${STATE_ROOT}`);
  }
  return removed;
}

/** What of the harness is still on the machine (empty when nothing): for the teardown check. */
export async function clusterLeftovers(): Promise<string[]> {
  const left: string[] = [];
  left.push(...(await topCgroups(ours)).map((dir) => `cgroup ${dir}`));
  const { stdout } = await runCommand('ip', ['netns', 'list']);
  left.push(
    ...stdout
      .split('\n')
      .map((line) => line.split(' ')[0] ?? '')
      .filter(ours)
      .map((name) => `network namespace ${name}`),
  );
  left.push(...(await clusterLoopDevices()).map((device) => `loop device ${device}`));
  if (existsSync(STATE_ROOT)) left.push(`folder ${STATE_ROOT}`);
  const links = (await runCommand('ip', ['-o', 'link', 'show'])).stdout;
  for (const line of links.split('\n')) if (line.includes(`${CLUSTER_PREFIX}-`)) left.push(`link on the machine: ${line.split(':')[1]?.trim()}`);
  const rules = (await tryCommand('iptables-save', [])).stdout;
  for (const line of rules.split('\n')) if (/10\.21[3-6]\./.test(line) || line.includes(CLUSTER_PREFIX)) left.push(`iptables rule on the machine: ${line}`);
  for (const line of (await readFile('/proc/self/mountinfo', 'utf8')).split('\n')) {
    if (line.includes(STATE_ROOT) || line.includes(`/${CLUSTER_PREFIX}-`)) left.push(`mount on the machine: ${line.split(' ')[4]}`);
  }
  return left;
}
