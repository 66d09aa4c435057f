/**
 * The cluster itself: nodes, images, an overlay across the nodes, Swarm's
 * DNS for a service's tasks, and ports published in host mode (no IPVS
 * here: no VIP, no routing mesh).
 */
import assert from 'node:assert/strict';
import { ensureImage, ensureSandboxImage, loadImages, saveImages, SWARM_IMAGES } from '../../helpers/cluster/images.js';
import { waitFor } from '../../helpers/cluster/run-command.js';
import { hubGet, manager, runningTasks, type ClusterCheck } from '../context.js';

const PROBE_SERVICE = 'probe';
const PROBE_NETWORK = 'probe-net';
const PROBE_PORT = 18080;

export const infrastructureChecks: ClusterCheck[] = [
  {
    name: 'three nodes are Ready, every one a reachable manager',
    async run(context) {
      const { stdout } = await context.cluster.docker(manager(context), [
        'node',
        'ls',
        '--format',
        '{{.Hostname}} {{.Status}} {{.Availability}} {{.ManagerStatus}}',
      ]);
      const lines = stdout.trim().split('\n').sort();
      assert.deepEqual(
        lines.map((line) => line.replace(/ (Leader|Reachable)$/, ' manager')),
        context.cluster.nodes.map((node) => `${node.hostname} Ready Active manager`),
      );
      const t = context.cluster.times;
      context.figure(`formation: ${t.total} ms (namespaces ${t.namespaces}, engines ${t.engines}, swarm init+join+ready ${t.swarm})`);
    },
  },
  {
    name: 'images reach every node by docker save | docker load (the sandbox image too)',
    async run(context) {
      const started = Date.now();
      const [launcher, etcd, haproxy, echo, sandbox] = await Promise.all([
        ensureImage(SWARM_IMAGES.launcher),
        ensureImage(SWARM_IMAGES.etcd),
        ensureImage(SWARM_IMAGES.haproxy),
        ensureImage(SWARM_IMAGES.echo),
        ensureSandboxImage(),
      ]);
      context.images = { launcher, etcd, haproxy, echo, sandbox };
      context.figure(`images ready on the machine's engine (built or reused): ${Date.now() - started} ms`);
      const savedAt = Date.now();
      const sandboxTar = await saveImages('sandbox', [sandbox]);
      const toolsTar = await saveImages('tools', [launcher, etcd, haproxy, echo]);
      context.figure(`docker save (sandbox + 4 tool images): ${Date.now() - savedAt} ms`);
      // One node at a time: the figure is a node's load, not three sharing two cores.
      const sandboxMs: number[] = [];
      for (const node of context.cluster.nodes) sandboxMs.push(await loadImages(node, sandboxTar));
      const toolsMs = await Promise.all(context.cluster.nodes.map((node) => loadImages(node, toolsTar)));
      context.figure(`docker load of the sandbox image, per node: ${sandboxMs.join(', ')} ms; the 4 tool images, 3 nodes at once: ${toolsMs.join(', ')} ms`);
      for (const node of context.cluster.nodes) {
        const { stdout } = await context.cluster.docker(node, ['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}']);
        for (const tag of [launcher, etcd, haproxy, echo, sandbox]) assert.ok(stdout.split('\n').includes(tag), `${tag} is on ${node.hostname}`);
      }
    },
  },
  {
    name: 'a global service on an overlay has a task on each node',
    async run(context) {
      const node = manager(context);
      await context.cluster.docker(node, ['network', 'create', '--driver', 'overlay', '--attachable', PROBE_NETWORK]);
      await context.cluster.docker(node, [
        'service',
        'create',
        '--detach',
        '--name',
        PROBE_SERVICE,
        '--mode',
        'global',
        '--endpoint-mode',
        'dnsrr',
        '--network',
        PROBE_NETWORK,
        '--publish',
        `mode=host,target=8080,published=${PROBE_PORT}`,
        '--env',
        'TOOLCELL_NODE={{.Node.Hostname}}',
        context.images.echo,
      ]);
      const nodes = await waitFor(
        'a running probe task on each node',
        async () => {
          const running = await runningTasks(context, PROBE_SERVICE);
          return running.length === context.cluster.nodes.length ? running.sort() : undefined;
        },
        120_000,
      );
      assert.deepEqual(
        nodes,
        context.cluster.nodes.map((n) => n.hostname),
      );
    },
  },
  {
    name: 'DNS tasks.<service> names every task, and each answers across the overlay (VXLAN)',
    async run(context) {
      // A client container on the attachable overlay, on the first node, asks each task by address.
      const script = [
        'import json, socket, urllib.request',
        `ips = sorted({a[4][0] for a in socket.getaddrinfo("tasks.${PROBE_SERVICE}", 8080, socket.AF_INET)})`,
        'nodes = [json.load(urllib.request.urlopen("http://%s:8080/healthz" % ip, timeout=10))["node"] for ip in ips]',
        'print(json.dumps({"ips": ips, "nodes": sorted(nodes)}))',
      ].join('\n');
      const { stdout } = await context.cluster.docker(manager(context), [
        'run',
        '--rm',
        '--network',
        PROBE_NETWORK,
        '--entrypoint',
        'python3',
        context.images.echo,
        '-c',
        script,
      ]);
      const answer = JSON.parse(stdout) as { ips: string[]; nodes: string[] };
      assert.equal(answer.ips.length, context.cluster.nodes.length, `tasks.${PROBE_SERVICE} resolves to one address per task: ${answer.ips.join(', ')}`);
      assert.deepEqual(
        answer.nodes,
        context.cluster.nodes.map((n) => n.hostname),
      );
    },
  },
  {
    name: 'a port published in host mode answers on each node, from the hub',
    async run(context) {
      for (const node of context.cluster.nodes) {
        const answer = await waitFor(
          `${node.hostname}:${PROBE_PORT}`,
          async () => {
            const got = await hubGet(`http://${node.address}:${PROBE_PORT}/healthz`);
            return got.status === 200 ? got : undefined;
          },
          30_000,
        );
        assert.equal((JSON.parse(answer.body) as { node: string }).node, node.hostname);
      }
      await context.cluster.docker(manager(context), ['service', 'rm', PROBE_SERVICE]);
      await waitFor(
        'the probe service’s containers to go',
        async () => {
          for (const node of context.cluster.nodes)
            if ((await context.cluster.docker(node, ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${PROBE_SERVICE}`])).stdout.trim())
              return undefined;
          return true;
        },
        60_000,
      );
      await context.cluster.docker(manager(context), ['network', 'rm', PROBE_NETWORK]);
    },
  },
];
