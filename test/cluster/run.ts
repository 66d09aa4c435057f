/**
 * `npm run test:cluster`: forms a three-node Docker Swarm on this machine
 * (test/helpers/cluster/), runs the checks in order against it, removes
 * everything it made, and prints `N passed, M failed`. Bounded: a backstop
 * ends the run (with the cleanup) after 15 minutes. Needs root, dockerd 20.10
 * and the machine's engine for building the images; under CI=true nothing
 * is skipped. CLUSTER_CHECKS=<regex> runs only the checks whose name
 * matches; CLUSTER_KEEP=1 leaves the cluster up for a look (then
 * `npm run test:cluster:cleanup`).
 */
import { existsSync } from 'node:fs';
import { clusterLeftovers, clusterLoopDevices, loopBackings } from '../helpers/cluster/cleanup.js';
import { formCluster, type Cluster } from '../helpers/cluster/cluster.js';
import { NODE_TOOLCELL_DIR } from '../helpers/cluster/layout.js';
import { runCommand } from '../helpers/cluster/run-command.js';
import { etcdChecks } from './checks/etcd.js';
import { frontChecks } from './checks/front.js';
import { infrastructureChecks } from './checks/infrastructure.js';
import { launcherChecks } from './checks/launcher.js';
import { nodeLossChecks } from './checks/node-loss.js';
import { operationsChecks } from './checks/operations.js';
import { stackChecks } from './checks/stack.js';
import { tenantMoveChecks } from './checks/tenant-move.js';
import { revocationChecks, toolcellChecks } from './checks/toolcell.js';
import { CERTS_DIR, type ClusterCheck, type ClusterContext } from './context.js';

const BACKSTOP_MS = 15 * 60_000;
const checks: ClusterCheck[] = [
  ...infrastructureChecks,
  ...stackChecks,
  ...etcdChecks,
  ...frontChecks,
  ...launcherChecks,
  ...toolcellChecks,
  ...tenantMoveChecks,
  ...operationsChecks,
  ...nodeLossChecks,
  ...revocationChecks,
];
const only = process.env.CLUSTER_CHECKS === undefined ? undefined : new RegExp(process.env.CLUSTER_CHECKS); // run only the checks whose name matches (formation and teardown always run)

const say = (line: string) => process.stdout.write(`${line}\n`);
const figures: string[] = [];
let passed = 0;
let failed = 0;
let cluster: Cluster | undefined;
let disposing: Promise<unknown> | undefined;

function dispose(): Promise<unknown> {
  disposing ??= (cluster?.dispose() ?? import('../helpers/cluster/cleanup.js').then((m) => m.removeClusterLeftovers())).catch((error: Error) =>
    say(`cleanup failed: ${error.message}`),
  );
  return disposing;
}

async function check(name: string, run: () => Promise<void>): Promise<void> {
  const started = Date.now();
  try {
    await run();
    passed++;
    say(`ok ${passed + failed} - ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    failed++;
    say(`not ok ${passed + failed} - ${name} (${Date.now() - started} ms)`);
    say(`  ${((error as Error).stack ?? String(error)).split('\n').slice(0, 6).join('\n  ')}`);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    say(`${signal}: removing the cluster`);
    void dispose().finally(() => process.exit(130));
  });
}
const backstop = setTimeout(() => {
  say(`backstop: the run took over ${BACKSTOP_MS / 60_000} minutes; removing the cluster`);
  void dispose().finally(() => {
    say(`${passed} passed, ${failed + 1} failed`);
    process.exit(1);
  });
}, BACKSTOP_MS);

const engineBefore = (await runCommand('docker', ['info', '--format', '{{.Swarm.LocalNodeState}} {{.DockerRootDir}}'])).stdout.trim();
const toolcellDirBefore = existsSync(NODE_TOOLCELL_DIR);
say('cluster: forming 3 nodes');
const context = {
  certs: CERTS_DIR,
  frontCa: '',
  figure: (line: string) => figures.push(line),
  images: { launcher: '', etcd: '', haproxy: '', echo: '', sandbox: '' },
} as Omit<ClusterContext, 'cluster'> & Partial<Pick<ClusterContext, 'cluster'>>;
await check('the Swarm forms: three engines in their own network namespaces', async () => {
  cluster = await formCluster({ nodes: 3 });
  context.cluster = cluster;
});
for (const item of checks) {
  if (only !== undefined && !only.test(item.name)) continue;
  await check(item.name, async () => {
    if (context.cluster === undefined) throw new Error('no cluster (formation failed)');
    await item.run(context as ClusterContext);
  });
}
if (process.env.CLUSTER_KEEP === '1') {
  // For a developer who wants to look at the cluster: nothing is removed, and the run says so (CI never sets it).
  clearTimeout(backstop);
  for (const line of figures) say(`figure: ${line}`);
  say(`CLUSTER_KEEP=1: the cluster is still there (docker -H unix:///var/lib/tcsw/n1/run/docker.sock …); remove it with npm run test:cluster:cleanup`);
  say(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}
await check('teardown removes everything the harness made; the machine’s own engine is as it was', async () => {
  // Each of the cluster's loop devices with its backing file: after the cleanup, a device number attached to another file is someone else's.
  const before = await loopBackings();
  const loops = (await clusterLoopDevices()).map((device) => [device, before.get(device)] as const);
  await dispose();
  const left = await clusterLeftovers();
  const after = await loopBackings();
  for (const [device, backing] of loops) if (after.get(device) === backing) left.push(`loop device ${device} still attached`);
  if (left.length > 0) throw new Error(`left on the machine: ${left.join('; ')}`);
  const engineAfter = (await runCommand('docker', ['info', '--format', '{{.Swarm.LocalNodeState}} {{.DockerRootDir}}'])).stdout.trim();
  if (engineAfter !== engineBefore) throw new Error(`the machine's engine changed: ${engineBefore} → ${engineAfter}`);
  if (existsSync(NODE_TOOLCELL_DIR) !== toolcellDirBefore)
    throw new Error(`${NODE_TOOLCELL_DIR} was ${toolcellDirBefore ? '' : 'not '}there before, and is ${toolcellDirBefore ? 'not ' : ''}now`);
});
clearTimeout(backstop);
for (const line of figures) say(`figure: ${line}`);
say(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
