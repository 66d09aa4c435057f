/**
 * deploy/swarm/ deployed as an operator would (deploy.sh, which runs
 * `docker stack deploy`), with the stand-in server (images/echo) in place
 * of toolcell's: the launcher gives each node's server the power a Swarm
 * task cannot have, the server gets its Swarm secrets, and a rolling update
 * drains each node in turn while a request is in flight.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../../helpers/cluster/layout.js';
import { runCommand, waitFor } from '../../helpers/cluster/run-command.js';
import { openSessions } from './front.js';
import { CERTS_DIR, FRONT_PORT, hubServerGet, manager, runningTasks, SERVER_PORT, STACK, type ClusterCheck, type ClusterContext } from '../context.js';

const SERVER = 'toolcell-server';

/** Each node's server answers /healthz with its own name: returns the container id per node. */
async function serversUp(context: ClusterContext): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const node of context.cluster.nodes) {
    const id = await waitFor(
      `${node.hostname}'s server`,
      async () => {
        const got = await hubServerGet(node, '/readyz');
        if (got.status !== 200 || (JSON.parse(got.body) as { node: string }).node !== node.hostname) return undefined;
        return (await context.cluster.docker(node, ['inspect', '--format', '{{.Id}}', SERVER])).stdout.trim() || undefined;
      },
      120_000,
    );
    ids.set(node.hostname, id);
  }
  return ids;
}

/** Runs deploy/swarm/deploy.sh against the Swarm's manager, as the README has an operator do, with the harness's images, `server` (its image, and its command or environment) and `more` arguments; returns what it said on stderr. */
export async function runDeployScript(context: ClusterContext, server: Record<string, string>, more: string[] = []): Promise<string> {
  const { stderr } = await runCommand(
    'bash',
    [
      join(REPO_ROOT, 'deploy', 'swarm', 'deploy.sh'),
      '--stack',
      STACK,
      '--certs',
      CERTS_DIR,
      '--front-port',
      String(FRONT_PORT),
      '--server-port',
      String(SERVER_PORT),
      ...more,
    ],
    {
      env: {
        DOCKER_HOST: `unix://${manager(context).socket}`,
        TOOLCELL_LAUNCHER_IMAGE: context.images.launcher,
        TOOLCELL_ETCD_IMAGE: context.images.etcd,
        TOOLCELL_HAPROXY_IMAGE: context.images.haproxy,
        ...server,
      },
    },
  );
  return stderr;
}

export const stackChecks: ClusterCheck[] = [
  {
    name: 'deploy.sh deploys the stack: a server on every node, the front on every node, three etcd members',
    async run(context) {
      const started = Date.now();
      const said = await runDeployScript(context, {
        TOOLCELL_SERVER_IMAGE: context.images.echo,
        // The stand-in's own command (deploy.sh's default is toolcell's).
        TOOLCELL_SERVER_CMD: '[]',
        TOOLCELL_SERVER_ENV: JSON.stringify([
          `PORT=${SERVER_PORT}`,
          'TLS_CERT=/run/secrets/toolcell-server.pem',
          'TLS_KEY=/run/secrets/toolcell-server-key.pem',
        ]),
      });
      // No --front-cert: deploy.sh made the front's certificate from the cluster's CA, and says so.
      assert.match(said, /no --front-cert: the front serves .*front\.pem/);
      context.frontCa = join(CERTS_DIR, 'ca.pem');
      const hostnames = context.cluster.nodes.map((node) => node.hostname);
      for (const service of ['server', 'front']) {
        await waitFor(
          `${service} on every node`,
          async () => ((await runningTasks(context, `${STACK}_${service}`)).sort().join() === hostnames.join() ? true : undefined),
          180_000,
        );
      }
      for (const [index, member] of ['etcd1', 'etcd2', 'etcd3'].entries()) {
        const nodes = await waitFor(
          `${member} running`,
          async () => {
            const running = await runningTasks(context, `${STACK}_${member}`);
            return running.length === 1 ? running : undefined;
          },
          180_000,
        );
        assert.deepEqual(nodes, [hostnames[index]], `${member} is pinned to its labelled node`);
      }
      await serversUp(context);
      // Deployed means clients are served: every front has seen a server come up (its health checks) and opens a session.
      for (const node of context.cluster.nodes) {
        await waitFor(
          `the front on ${node.hostname} opening sessions`,
          async () => ((await openSessions(context, `${node.address}:${FRONT_PORT}`, 3)).failures.length === 0 ? true : undefined),
          120_000,
          1000,
        );
      }
      context.figure(`stack deployed, every task running and every front opening sessions: ${Date.now() - started} ms`);
      // What the cluster costs the machine: each node's processes and containers (its cgroup tree), anonymous memory only.
      const rss: string[] = [];
      for (const node of context.cluster.nodes) {
        const stat = await readFile(join('/sys/fs/cgroup/memory', node.hostname, 'memory.stat'), 'utf8');
        const bytes = Number(/^total_rss (\d+)$/m.exec(stat)?.[1] ?? NaN);
        rss.push(`${node.hostname} ${Math.round(bytes / 2 ** 20)} MiB`);
      }
      context.figure(`memory (rss) with the stack running: ${rss.join(', ')} (dockerd, containerd, launcher, server, HAProxy, etcd member each)`);
    },
  },
  {
    name: 'the launcher runs each node’s server with the power it needs, not privileged: loop mount, iptables, hardened sandbox on the mounted disk',
    async run(context) {
      for (const node of context.cluster.nodes) {
        const { stdout } = await context.cluster.docker(node, ['inspect', '--format', '{{json .HostConfig}}', SERVER]);
        const host = JSON.parse(stdout) as { Privileged: boolean; NetworkMode: string; CapAdd: string[]; Binds: string[] };
        assert.equal(host.Privileged, false);
        assert.equal(host.NetworkMode, 'host');
        assert.deepEqual(host.CapAdd.map((cap) => cap.replace(/^CAP_/, '')).sort(), ['NET_ADMIN', 'NET_RAW', 'SYS_ADMIN', 'SYS_NICE']);
        // SYS_NICE: the server's event loop at nice -5 (field 19 of its main thread's stat); the pattern does not match this script.
        // Waited for: right after the deploy the run found no server process in the container once (the launcher was still
        // starting it), and the nice is only set once it runs.
        const nice = await waitFor(
          `the server's nice -5 on ${node.hostname}`,
          async () => {
            const { stdout } = await context.cluster.docker(node, [
              'exec',
              SERVER,
              'sh',
              '-c',
              'for p in /proc/[0-9]*; do tr "\\0" " " 2>/dev/null < $p/cmdline | grep -q "cli/bi[n].js serve" && cut -d" " -f19 $p/stat; done; true',
            ]);
            return /^-?\d+$/m.test(stdout) ? stdout : undefined;
          },
          60_000,
          1000,
        );
        assert.match(nice, /^-5$/m, `the server's nice on ${node.hostname}: ${nice}`);
        assert.ok(host.Binds.includes('/var/lib/toolcell:/var/lib/toolcell:rshared'), host.Binds.join(' '));
      }
      const node = manager(context);
      const dir = '/var/lib/toolcell/tcsw-power';
      // In the server: a disk image loop-mounted (as a tenant's capped workspace), and an egress rule on the node's network.
      await context.cluster.docker(node, [
        'exec',
        SERVER,
        'sh',
        '-ec',
        `mkdir -p ${dir}/ws && truncate -s 64M ${dir}/disk.img && mkfs.ext4 -q ${dir}/disk.img && dev=$(losetup --find --show ${dir}/disk.img) && mount -o nosuid,nodev $dev ${dir}/ws && echo written-by-the-server > ${dir}/ws/proof && iptables -w 5 -I INPUT -i tcpower0 -m comment --comment "toolcell egress tcpower0" -j DROP`,
      ]);
      try {
        const rules = (await runCommand('ip', ['netns', 'exec', node.netns, 'iptables', '-S', 'INPUT'])).stdout;
        assert.match(rules, /toolcell egress tcpower0/, 'the rule is in the node’s own network namespace');
        // A hardened sandbox container of the node's engine sees the mounted disk (the mount propagated back: rshared).
        const { stdout } = await context.cluster.docker(node, [
          'run',
          '--rm',
          '--network',
          'none',
          '--read-only',
          '--cap-drop',
          'ALL',
          '--security-opt',
          'no-new-privileges',
          '--pids-limit',
          '64',
          '--user',
          '10001:10001',
          '-v',
          `${dir}/ws:/workspace:ro`,
          '--entrypoint',
          'sh',
          context.images.sandbox,
          '-c',
          'cat /workspace/proof; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; stat -f -c %b /workspace',
        ]);
        assert.match(stdout, /written-by-the-server/);
        assert.match(stdout, /NoNewPrivs:\s+1/);
        assert.match(stdout, /Seccomp:\s+2/);
        const blocks = Number(stdout.trim().split('\n').at(-1));
        assert.ok(blocks > 0 && blocks < 70_000, `the sandbox sees the 64 MiB disk, not the node's (${blocks} blocks)`);
      } finally {
        // The loop device stays attached, as a server that crashed would leave it: the teardown must find and detach it.
        await context.cluster.docker(node, [
          'exec',
          SERVER,
          'sh',
          '-c',
          `iptables -w 5 -D INPUT -i tcpower0 -m comment --comment "toolcell egress tcpower0" -j DROP; umount ${dir}/ws`,
        ]);
      }
    },
  },
  {
    name: 'the server gets the launcher task’s Swarm secrets (TLS), read-only, and nothing on the node’s disk',
    async run(context) {
      const expected = await readFile(join(CERTS_DIR, 'toolcell-server.pem'), 'utf8');
      for (const node of context.cluster.nodes) {
        const { stdout } = await context.cluster.docker(node, ['exec', SERVER, 'cat', '/run/secrets/toolcell-server.pem']);
        assert.equal(stdout, expected, `${node.hostname}'s server reads its certificate`);
        const mount = (await context.cluster.docker(node, ['exec', SERVER, 'sh', '-c', 'grep " /run/secrets/toolcell-server-key.pem " /proc/self/mountinfo']))
          .stdout;
        assert.match(mount, / ro[, ]/, 'read-only');
        assert.match(mount, / - tmpfs /, 'on the engine’s tmpfs for the task');
      }
    },
  },
];
