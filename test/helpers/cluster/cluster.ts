/**
 * A Docker Swarm of several engines on one machine, each engine in its own
 * network namespace (its own hostname, /run, data root, cgroup and, through
 * ip netns exec, its own mount namespace and /sys), joined by a bridge in a
 * hub namespace. See layout.ts for the names and ranges, node-start.sh for
 * how one engine starts, cleanup.ts for how it all goes away.
 *
 * @example
 * const cluster = await formCluster({ nodes: 3 });
 * try {
 *   await cluster.docker(cluster.nodes[0]!, ['node', 'ls']);
 * } finally {
 *   await cluster.dispose();
 * }
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { killCgroupTrees, topCgroups } from './cgroups.js';
import { MADE_TOOLCELL_DIR_MARK, removeClusterLeftovers } from './cleanup.js';
import {
  CLUSTER_PREFIX,
  HUB_ADDRESS,
  HUB_BRIDGE,
  HUB_NETNS,
  LOCAL_POOL,
  NODE_TOOLCELL_DIR,
  REPO_ROOT,
  STATE_ROOT,
  SWARM_POOL,
  clusterNode,
  type ClusterNode,
} from './layout.js';
import { runCommand, tryCommand, waitFor, type CommandOutput, type RunOptions } from './run-command.js';

const NODE_START = join(REPO_ROOT, 'test', 'cluster', 'sh', 'node-start.sh');
const LOCK = join(STATE_ROOT, 'harness.pid');

export interface ClusterOptions {
  /** How many engines (1-9). All are Swarm managers, so losing one keeps the Swarm's quorum. */
  nodes: number;
}

/** Times the formation took, in ms. */
export interface FormationTimes {
  namespaces: number;
  engines: number;
  swarm: number;
  total: number;
}

export interface Cluster {
  nodes: ClusterNode[];
  times: FormationTimes;
  /** `docker …` against one node's engine. */
  docker(node: ClusterNode, args: readonly string[], options?: RunOptions): Promise<CommandOutput>;
  /** A command in the hub namespace (where a client of the cluster sits). */
  hub(command: string, args: readonly string[], options?: RunOptions): Promise<CommandOutput>;
  /** Stops a node's engine as a lost machine would: every process of it killed at once. */
  killNode(node: ClusterNode): Promise<void>;
  /** Starts a killed node's engine again, with its data root as it was left. */
  startNode(node: ClusterNode): Promise<void>;
  /** Removes everything (see cleanup.ts). */
  dispose(): Promise<string[]>;
}

const daemonConfig = {
  'default-address-pools': [{ base: LOCAL_POOL, size: 24 }],
  'log-driver': 'json-file',
  'log-opts': { 'max-size': '5m', 'max-file': '2' },
  // The sandbox needs nothing else; the machine's daemon.json (runtimes) is not read.
  'storage-driver': 'overlay2',
};

async function takeLock(): Promise<void> {
  if (existsSync(LOCK)) {
    const pid = Number((await readFile(LOCK, 'utf8')).trim());
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (pid !== process.pid && cmdline.includes('node')) throw new Error(`another cluster harness runs (pid ${pid}); it removes everything when it ends`);
  }
  const left = await removeClusterLeftovers();
  if (left.length > 0) process.stderr.write(`cluster: removed leftovers of an earlier run: ${left.join('; ')}\n`);
  await mkdir(STATE_ROOT, { recursive: true, mode: 0o700 });
  await writeFile(LOCK, String(process.pid));
}

async function makeNamespaces(nodes: ClusterNode[]): Promise<void> {
  const ip = (...args: string[]) => runCommand('ip', args);
  await ip('netns', 'add', HUB_NETNS);
  await ip('-n', HUB_NETNS, 'link', 'set', 'lo', 'up');
  await ip('-n', HUB_NETNS, 'link', 'add', HUB_BRIDGE, 'type', 'bridge');
  await ip('-n', HUB_NETNS, 'addr', 'add', `${HUB_ADDRESS}/24`, 'dev', HUB_BRIDGE);
  await ip('-n', HUB_NETNS, 'link', 'set', HUB_BRIDGE, 'up');
  for (const node of nodes) {
    await ip('netns', 'add', node.netns);
    await ip('-n', node.netns, 'link', 'set', 'lo', 'up');
    // Made in the hub namespace, one end moved: nothing appears on the machine's own network.
    await ip('-n', HUB_NETNS, 'link', 'add', node.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', node.netns);
    await ip('-n', HUB_NETNS, 'link', 'set', node.veth, 'master', HUB_BRIDGE, 'up');
    await ip('-n', node.netns, 'addr', 'add', `${node.address}/24`, 'dev', 'eth0');
    await ip('-n', node.netns, 'link', 'set', 'eth0', 'up');
    for (const sub of ['run', 'docker', 'toolcell']) await mkdir(join(node.dir, sub), { recursive: true });
    await writeFile(join(node.dir, 'daemon.json'), JSON.stringify(daemonConfig, null, 2));
  }
  if (!existsSync(NODE_TOOLCELL_DIR)) {
    // Each node binds its own folder here, in its own mount namespace; the machine keeps an empty folder until cleanup.
    await mkdir(NODE_TOOLCELL_DIR);
    await writeFile(MADE_TOOLCELL_DIR_MARK, '');
  }
}

function startEngine(node: ClusterNode): void {
  const log = openSync(join(node.dir, 'dockerd.log'), 'a');
  const child = spawn(
    'ip',
    ['netns', 'exec', node.netns, 'unshare', '--uts', '--fork', 'bash', NODE_START, CLUSTER_PREFIX, node.name, String(node.index), node.dir],
    {
      stdio: ['ignore', log, log],
      detached: true,
    },
  );
  child.unref();
  closeSync(log);
}

export async function formCluster(options: ClusterOptions): Promise<Cluster> {
  const { nodes: count } = options;
  if (!Number.isInteger(count) || count < 1 || count > 9) throw new RangeError(`options.nodes must be 1-9, got ${count}`);
  const nodes = Array.from({ length: count }, (_, i) => clusterNode(i + 1));
  const t0 = Date.now();
  await takeLock();

  const docker = (node: ClusterNode, args: readonly string[], runOptions?: RunOptions) =>
    runCommand('docker', ['-H', `unix://${node.socket}`, ...args], runOptions);
  const engineReady = (node: ClusterNode) =>
    waitFor(
      `${node.hostname}'s engine`,
      async () =>
        (await tryCommand('docker', ['-H', `unix://${node.socket}`, 'version', '--format', '{{.Server.Version}}'], { timeoutMs: 5000 })).ok ? true : undefined,
      90_000,
      300,
    );

  const cluster: Cluster = {
    nodes,
    times: { namespaces: 0, engines: 0, swarm: 0, total: 0 },
    docker,
    hub: (command, args, runOptions) => runCommand('ip', ['netns', 'exec', HUB_NETNS, command, ...args], runOptions),
    async killNode(node) {
      await killCgroupTrees(await topCgroups((name) => name === node.hostname));
    },
    async startNode(node) {
      startEngine(node);
      await engineReady(node);
    },
    dispose: () => removeClusterLeftovers(),
  };

  try {
    await makeNamespaces(nodes);
    const t1 = Date.now();
    for (const node of nodes) startEngine(node);
    await Promise.all(nodes.map(engineReady));
    const t2 = Date.now();
    const [first, ...others] = nodes;
    await docker(first!, [
      'swarm',
      'init',
      '--advertise-addr',
      first!.address,
      '--listen-addr',
      `${first!.address}:2377`,
      '--default-addr-pool',
      SWARM_POOL,
      '--default-addr-pool-mask-length',
      '24',
    ]);
    const token = (await docker(first!, ['swarm', 'join-token', '-q', 'manager'])).stdout.trim();
    // One at a time: Raft adds one manager after the other anyway.
    for (const node of others)
      await docker(node, [
        'swarm',
        'join',
        '--token',
        token,
        '--advertise-addr',
        node.address,
        '--listen-addr',
        `${node.address}:2377`,
        `${first!.address}:2377`,
      ]);
    await waitFor(
      'every node Ready',
      async () => {
        const { stdout } = await docker(first!, ['node', 'ls', '--format', '{{.Hostname}} {{.Status}} {{.Availability}}']);
        const ready = stdout.split('\n').filter((line) => line.endsWith(' Ready Active')).length;
        return ready === nodes.length ? true : undefined;
      },
      60_000,
    );
    const t3 = Date.now();
    cluster.times = { namespaces: t1 - t0, engines: t2 - t1, swarm: t3 - t2, total: t3 - t0 };
    return cluster;
  } catch (error) {
    await removeClusterLeftovers().catch((cleanupError: Error) =>
      process.stderr.write(`cluster: cleanup after a failed formation failed: ${cleanupError.message}\n`),
    );
    throw error;
  }
}
