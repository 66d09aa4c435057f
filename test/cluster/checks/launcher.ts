/**
 * Why the launcher, and how it behaves when things go wrong: a plain Swarm
 * task cannot attach a loop device even with SYS_ADMIN and /dev bound; the
 * launcher replaces a crashed server, adopts (drains and replaces) the
 * server of a launcher that was killed, and drains its server when the node
 * is drained for maintenance.
 */
import assert from 'node:assert/strict';
import { waitFor } from '../../helpers/cluster/run-command.js';
import type { ClusterNode } from '../../helpers/cluster/layout.js';
import { hubServerGet, manager, STACK, type ClusterCheck, type ClusterContext } from '../context.js';
import { followServiceLog } from './service-log.js';

const SERVER = 'toolcell-server';

async function serverId(context: ClusterContext, node: ClusterNode): Promise<string | undefined> {
  const { stdout } = await context.cluster.docker(node, ['ps', '-q', '--no-trunc', '--filter', `name=^${SERVER}$`]);
  const ids = stdout.trim().split('\n').filter(Boolean);
  assert.ok(ids.length <= 1, `at most one server on ${node.hostname}: ${ids.join(' ')}`);
  return ids[0];
}

/** Waits until the node's server is a new container (not `old`) that answers ready; returns its id. */
async function newServerReady(context: ClusterContext, node: ClusterNode, old: string | undefined): Promise<string> {
  return waitFor(
    `a new server on ${node.hostname}`,
    async () => {
      const id = await serverId(context, node);
      if (id === undefined || id === old) return undefined;
      return (await hubServerGet(node, '/readyz')).status === 200 ? id : undefined;
    },
    120_000,
    500,
  );
}

/** Whether the launchers (their logs, from every node) say `text` after `since`, within `ms`. */
async function saysSince(context: ClusterContext, text: string, since: Date, ms: number): Promise<boolean> {
  const says = (lines: string[]): boolean => lines.some((line) => line.includes(text));
  return says(await followServiceLog(context, 'server', since, says, ms));
}

async function launcherContainer(context: ClusterContext, node: ClusterNode): Promise<string> {
  const { stdout } = await context.cluster.docker(node, ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${STACK}_server`]);
  const id = stdout.trim().split('\n').filter(Boolean)[0];
  assert.ok(id !== undefined, `a launcher runs on ${node.hostname}`);
  return id;
}

export const launcherChecks: ClusterCheck[] = [
  {
    name: 'why a launcher: a plain Swarm task with SYS_ADMIN and /dev bound cannot attach a loop device',
    async run(context) {
      const node = manager(context);
      const service = 'plain-task-probe';
      await context.cluster.docker(node, [
        'service',
        'create',
        '--detach',
        '--name',
        service,
        '--restart-condition',
        'none',
        '--cap-add',
        'SYS_ADMIN',
        '--mount',
        'type=bind,source=/dev,target=/dev',
        '--constraint',
        `node.hostname==${node.hostname}`,
        '--entrypoint',
        'sh',
        context.images.echo,
        '-c',
        'truncate -s 8M /tmp/disk.img; if dev=$(losetup --find --show /tmp/disk.img 2>/tmp/e); then echo ATTACHED; losetup -d $dev; else echo "REFUSED $(cat /tmp/e)"; fi; sleep 600',
      ]);
      try {
        const said = await waitFor(
          'the plain task’s answer',
          async () => {
            const { stdout } = await context.cluster.docker(node, ['service', 'logs', '--raw', service]);
            return /ATTACHED|REFUSED/.test(stdout) ? stdout : undefined;
          },
          120_000,
          1000,
        );
        assert.match(said, /REFUSED .*(Permission denied|not permitted)/i);
      } finally {
        await context.cluster.docker(node, ['service', 'rm', service]);
      }
    },
  },
  {
    name: 'launcher: a server that dies is replaced (the task ends with its status, Swarm starts another)',
    async run(context) {
      const node = context.cluster.nodes[2]!;
      const old = await serverId(context, node);
      const started = Date.now();
      await context.cluster.docker(node, ['kill', SERVER]);
      await newServerReady(context, node, old);
      context.figure(`a killed server replaced (launcher task restarted) in ${Date.now() - started} ms`);
    },
  },
  {
    name: 'launcher: a launcher killed outright leaves its server; the next one drains it and starts its own',
    async run(context) {
      const node = context.cluster.nodes[2]!;
      const oldServer = await serverId(context, node);
      const oldLauncher = await launcherContainer(context, node);
      const adoption = `${node.hostname}: a server from an earlier launcher is still there: draining and removing it`;
      // Followed from before the kill, so the line is read as it is said.
      const saying = saysSince(context, adoption, new Date(), 150_000);
      await context.cluster.docker(node, ['kill', oldLauncher]);
      await newServerReady(context, node, oldServer);
      assert.ok(await saying, `the new launcher says: ${adoption}`);
      const { stdout: usage } = await context.cluster.docker(node, [
        'stats',
        '--no-stream',
        '--format',
        '{{.MemUsage}}',
        await launcherContainer(context, node),
      ]);
      context.figure(`a launcher's memory while it supervises: ${usage.split('/')[0]?.trim()}`);
    },
  },
  {
    name: 'launcher: draining a node (docker node update --availability drain) drains and removes its server; active again, a new one starts',
    async run(context) {
      const node = context.cluster.nodes[2]!;
      const old = await serverId(context, node);
      const drained = `${node.hostname}: server drained and removed`;
      // Followed from before the drain: the drained launcher's task ends soon after it says so.
      const saying = saysSince(context, drained, new Date(), 150_000);
      await context.cluster.docker(manager(context), ['node', 'update', '--availability', 'drain', node.hostname]);
      try {
        await waitFor(`${node.hostname}'s server gone`, async () => ((await serverId(context, node)) === undefined ? true : undefined), 120_000, 500);
        assert.ok(await saying, `its launcher says: ${drained}`);
      } finally {
        await context.cluster.docker(manager(context), ['node', 'update', '--availability', 'active', node.hostname]);
      }
      await newServerReady(context, node, old);
    },
  },
];
