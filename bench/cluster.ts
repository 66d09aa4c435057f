/**
 * bench/cluster: what one toolcell service across machines costs a call,
 * on the three-engine Swarm of test/helpers/cluster (three dockerd in
 * network namespaces of this one machine), with the real stack deployed
 * by deploy/swarm/deploy.sh and one tenant placed on each node. Prints
 * figures and ratios measured side by side in one run; asserts nothing.
 *
 *   calls     a small read_file call's p50 and p99 in three sessions of one tenant, taken in
 *             turn: directly at the tenant's node's server (TLS), through the front on that
 *             node, and through the front of another node (HAProxy crosses nodes); target of
 *             issue 26: through the front ≤ 1.2 × direct
 *   opens     opening a session: directly at the tenant's node, at another node's server
 *             (which forwards it to the tenant's node), through a front
 *   sessions  sessions opened (and closed) per second through the fronts, with the tenants of
 *             1, 2 and 3 nodes (each node's own front)
 *
 *   flock /work/runs/cluster.lock npm run bench:cluster -- [--calls N] [--seconds S] [--workers W]
 * Needs root and dockerd 20.10, like npm run test:cluster (one at a time on a machine); removes
 * the cluster when it ends.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { removeClusterLeftovers } from '../test/helpers/cluster/cleanup.js';
import { formCluster, type Cluster } from '../test/helpers/cluster/cluster.js';
import { ensureImage, ensureSandboxImage, loadImages, saveImages, SWARM_IMAGES } from '../test/helpers/cluster/images.js';
import { waitFor } from '../test/helpers/cluster/run-command.js';
import { ensureServerImage } from '../test/helpers/cluster/server-image.js';
import { CERTS_DIR, FRONT_PORT, hubProbe, hubServerGet, SERVER_PORT, type ClusterContext } from '../test/cluster/context.js';
import { runDeployScript } from '../test/cluster/checks/stack.js';
import { AUDIT_FILE, etcdFlags, serverCommand, toolcell } from '../test/cluster/checks/toolcell.js';
import { fmt, percentile, sortNumbers } from './stats.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '200' }, seconds: { type: 'string', default: '15' }, workers: { type: 'string', default: '4' } },
});
const CALLS = Number(values.calls);
const SECONDS = Number(values.seconds);
const WORKERS = Number(values.workers);
const OPENS = 30;
/** The bench measures the machinery, not a tenant's quotas: limits far above what it asks. */
const BENCH_LIMITS = ['--limit', 'sessions=500', '--limit', 'sessionsPerMinute=60000', '--limit', 'callsPerMinute=60000', '--limit', 'concurrentCalls=64'];
const say = (line: string) => process.stdout.write(`${line}\n`);

let cluster: Cluster | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    say(`${signal}: removing the cluster`);
    void (cluster?.dispose() ?? removeClusterLeftovers()).finally(() => process.exit(130));
  });

try {
  const t0 = Date.now();
  cluster = await formCluster({ nodes: 3 });
  const nodes = cluster.nodes;
  const [launcher, etcd, haproxy, sandbox, server] = await Promise.all([
    ensureImage(SWARM_IMAGES.launcher),
    ensureImage(SWARM_IMAGES.etcd),
    ensureImage(SWARM_IMAGES.haproxy),
    ensureSandboxImage(),
    ensureServerImage(),
  ]);
  const archive = await saveImages('bench', [launcher, etcd, haproxy, sandbox, server]);
  for (const node of nodes) await loadImages(node, archive);
  const context: ClusterContext = {
    cluster,
    images: { launcher, etcd, haproxy, echo: '', sandbox },
    certs: CERTS_DIR,
    frontCa: join(CERTS_DIR, 'ca.pem'),
    figure: say,
  };
  await runDeployScript(context, {
    TOOLCELL_SERVER_IMAGE: server,
    TOOLCELL_SERVER_CMD: JSON.stringify(serverCommand(context)),
    TOOLCELL_AUDIT_FILE: AUDIT_FILE,
  });
  for (const node of nodes)
    await waitFor(`${node.hostname} serving`, async () => ((await hubServerGet(node, '/readyz')).status === 200 ? true : undefined), 300_000, 1000);
  const keys: string[] = [];
  for (const node of nodes) {
    const added = await waitFor(
      `a tenant placed on ${node.hostname}`,
      async () => (await toolcell(['tenant', 'add', `bench-${node.name}`, '--node', node.hostname, ...BENCH_LIMITS, ...etcdFlags(context)])).stdout.trim(),
      60_000,
      2000,
    );
    keys.push(added);
  }
  say(`cluster formed, images loaded, stack deployed, 3 tenants placed: ${Math.round((Date.now() - t0) / 1000)} s`);
  const front = (index: number) => `${nodes[index]!.address}:${FRONT_PORT}`;
  const direct = (index: number) => `${nodes[index]!.address}:${SERVER_PORT}`;
  // Every front sees every server up before anything is timed.
  await hubProbe('bench-probe', ['opens', JSON.stringify({ keys, frontCa: context.frontCa, fronts: [0, 1, 2].map(front), workers: 1, seconds: 3 })]);

  // 1. Calls: the tenant of node 1, three sessions side by side.
  const latency = await hubProbe<{ opens: Record<string, number[]>; calls: Record<string, number[]> }>(
    'bench-probe',
    [
      'latency',
      JSON.stringify({
        key: keys[0],
        frontCa: context.frontCa,
        clusterCa: join(CERTS_DIR, 'ca.pem'),
        paths: [
          { name: 'direct to its node', kind: 'direct', address: direct(0) },
          { name: 'its node’s front', kind: 'front', address: front(0) },
          { name: 'another node’s front', kind: 'front', address: front(1) },
          { name: 'at another node’s server (forwarded)', kind: 'direct', address: direct(1), openOnly: true },
        ],
        calls: CALLS,
        warmup: 20,
        opens: OPENS,
        closeVia: front(0),
      }),
    ],
    900_000,
  );
  say(`\ncalls (read_file of a small file, ${CALLS} per path, paths in turn; tenant on ${nodes[0]!.hostname}):`);
  const base = sortNumbers([...latency.calls['direct to its node']!]);
  const p = (sorted: number[], q: number) => percentile(sorted, q);
  for (const [name, samples] of Object.entries(latency.calls)) {
    const sorted = sortNumbers([...samples]);
    say(
      `  ${name.padEnd(36)} p50 ${fmt(p(sorted, 50)).padStart(9)}  p99 ${fmt(p(sorted, 99)).padStart(9)}   ×direct: p50 ${(p(sorted, 50) / p(base, 50)).toFixed(2)}  p99 ${(p(sorted, 99) / p(base, 99)).toFixed(2)}`,
    );
  }
  say(`opening a session (initialize, ${OPENS} per path, in turn):`);
  const baseOpen = sortNumbers([...latency.opens['direct to its node']!]);
  for (const [name, samples] of Object.entries(latency.opens)) {
    const sorted = sortNumbers([...samples]);
    say(
      `  ${name.padEnd(36)} p50 ${fmt(p(sorted, 50)).padStart(9)}  p99 ${fmt(p(sorted, 99)).padStart(9)}   ×direct: p50 ${(p(sorted, 50) / p(baseOpen, 50)).toFixed(2)}`,
    );
  }

  // 2. Sessions opened per second with the tenants of 1, 2 and 3 nodes.
  say(`\nsessions opened and closed per second through the fronts (${WORKERS} clients, ${SECONDS} s each):`);
  for (const count of [1, 2, 3]) {
    const got = await hubProbe<{ opened: number; failed: number; seconds: number; errors: string[] }>(
      'bench-probe',
      [
        'opens',
        JSON.stringify({
          keys: keys.slice(0, count),
          frontCa: context.frontCa,
          fronts: Array.from({ length: count }, (_, i) => front(i)),
          workers: WORKERS,
          seconds: SECONDS,
        }),
      ],
      SECONDS * 1000 + 120_000,
    );
    say(
      `  ${count} node(s) serving: ${(got.opened / got.seconds).toFixed(1)} sessions/s (${got.opened} in ${got.seconds.toFixed(1)} s, ${got.failed} failed${got.errors.length ? `: ${got.errors.join('; ')}` : ''})`,
    );
  }
  say(
    '\nOne 2-core machine: the three nodes, their dockerd, etcd members, HAProxies and the client share the same two cores, so more nodes cannot add capacity here; ' +
      'the sessions/s figures show what the cluster machinery costs (forwarding, HAProxy, etcd-free opens), not how it scales on machines of their own. ' +
      'Latency ratios are the front’s and the network namespaces’ hops (TLS terminated and opened again at HAProxy) against a direct TLS call.',
  );
} finally {
  await (cluster?.dispose() ?? removeClusterLeftovers());
}
