/**
 * Operating the cluster with the real toolcell server: private mounts in
 * the server container, every node's audit lines in one place, every
 * node's metrics, a node cut off from etcd leaving the new sessions to the
 * others, the fronts restarted and the servers rolled to a new version
 * without losing a session or a running call.
 */
import assert from 'node:assert/strict';
import { runCommand, waitFor } from '../../helpers/cluster/run-command.js';
import type { ClusterNode } from '../../helpers/cluster/layout.js';
import { hubGet, hubServerGet, manager, STACK, type ClusterCheck, type ClusterContext } from '../context.js';
import { followServiceLog } from './service-log.js';
import { METRICS_PORT, placedTenants } from './toolcell.js';
import { readStep, runScript, shell, sleep, succeeded, writeStep, type ScriptOutcome } from './sessions.js';

const SERVER = 'toolcell-server';

function nodeNamed(context: ClusterContext, hostname: string): ClusterNode {
  return context.cluster.nodes.find((node) => node.hostname === hostname)!;
}

async function serverIds(context: ClusterContext): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const node of context.cluster.nodes) {
    const { stdout } = await context.cluster.docker(node, ['ps', '-q', '--no-trunc', '--filter', `name=^${SERVER}$`]);
    ids.set(node.hostname, stdout.trim());
  }
  return ids;
}

async function updateCompleted(context: ClusterContext, service: string): Promise<boolean> {
  const { stdout } = await context.cluster.docker(manager(context), ['service', 'inspect', '--format', '{{.UpdateStatus.State}}', `${STACK}_${service}`]);
  return stdout.trim() === 'completed';
}

export const operationsChecks: ClusterCheck[] = [
  {
    name: 'private mounts in the server container: a tenant’s sandbox mounts its workspace from the server’s private mount point (the node’s /run/toolcell/mounts, rshared)',
    async run(context) {
      const tenant = placedTenants()[0]!;
      const node = nodeNamed(context, tenant.node);
      const opened = await runScript(context, { key: tenant.key, steps: [shell('echo private > pm.txt && cat pm.txt')], keep: true });
      try {
        assert.ok(succeeded(opened, 1), JSON.stringify(opened));
        // The session's sandbox container: its workspace binds come from private mount points, not from the workspace's path.
        const { stdout: ids } = await context.cluster.docker(node, ['ps', '-q']);
        const seen: string[] = [];
        const sources: string[] = [];
        for (const id of ids.split('\n').filter(Boolean)) {
          const { stdout } = await context.cluster.docker(node, ['inspect', '--format', '{{.Name}} {{.Config.Image}} {{json .Mounts}}', id]);
          const [name, image, mounts] = stdout.trim().split(' ', 3) as [string, string, string];
          seen.push(`${name} (${image}): ${mounts}`);
          if (name === `/${SERVER}` || image.startsWith('toolcell-swarm-')) continue;
          sources.push(...((JSON.parse(mounts) as { Type: string; Source: string }[] | null) ?? []).filter((m) => m.Type === 'bind').map((m) => m.Source));
        }
        assert.ok(
          sources.some((source) => source.startsWith('/run/toolcell/mounts/')),
          `a sandbox of ${tenant.name} on ${node.hostname} mounts its workspace from a private mount point: ${seen.join('; ')}`,
        );
        const { stdout: binds } = await context.cluster.docker(node, ['inspect', '--format', '{{json .HostConfig.Binds}}', SERVER]);
        assert.ok((JSON.parse(binds) as string[]).includes('/run/toolcell/mounts:/run/toolcell/mounts:rshared'), binds);
      } finally {
        if (opened.session) await runScript(context, { key: tenant.key, session: opened.session });
      }
    },
  },
  {
    name: 'audit lines of every node in one place: docker service logs toolcell_server carries each tenant’s call, with its node',
    async run(context) {
      const calls: { tenant: string; node: string; session: string }[] = [];
      const since = new Date(Date.now() - 5000);
      for (const tenant of placedTenants()) {
        const got = await runScript(context, { key: tenant.key, steps: [writeStep('audited.txt', `audited ${tenant.name}`)] });
        assert.ok(succeeded(got, 1) && got.session, JSON.stringify(got));
        calls.push({ tenant: tenant.name, node: tenant.node, session: got.session! });
      }
      // The one place: the service's log, gathered by any manager from every node's launcher (which relays its server's audit log).
      const audit = (text: string[]) =>
        text
          .filter((line) => line.startsWith('{'))
          .map((line) => {
            try {
              return JSON.parse(line) as Record<string, unknown>;
            } catch {
              return {};
            }
          });
      const found = (text: string[]) => calls.map((call) => audit(text).find((line) => line.session === call.session && line.event === 'tool_call'));
      const read = await followServiceLog(context, 'server', since, (text) => found(text).every(Boolean), 60_000);
      const lines = found(read);
      assert.ok(lines.every(Boolean), `every call's audit line in the service's log: ${JSON.stringify(lines)}`);
      for (const [index, line] of (lines as Record<string, unknown>[]).entries()) {
        assert.equal(line.node, calls[index]!.node, `the line names its node: ${JSON.stringify(line)}`);
        assert.equal(line.tenant, calls[index]!.tenant);
      }
      assert.equal(new Set(lines.map((line) => line!.node)).size, context.cluster.nodes.length, 'lines of every node');
    },
  },
  {
    name: 'metrics: each node’s /metrics answers at the address Swarm gives for the node (dockerswarm_sd role nodes), every series labelled with its node',
    async run(context) {
      // What Prometheus's dockerswarm_sd_configs (role: nodes) reads through the same Engine API: each node's hostname and address.
      const { stdout } = await context.cluster.docker(manager(context), ['node', 'ls', '--format', '{{.ID}}']);
      const { stdout: described } = await context.cluster.docker(manager(context), [
        'node',
        'inspect',
        '--format',
        '{{.Description.Hostname}} {{.Status.Addr}}',
        ...stdout.trim().split('\n'),
      ]);
      const targets = described
        .trim()
        .split('\n')
        .map((line) => line.split(' ') as [string, string]);
      assert.equal(targets.length, context.cluster.nodes.length);
      for (const [hostname, address] of targets) {
        const got = await hubGet(`http://${address}:${METRICS_PORT}/metrics`);
        assert.equal(got.status, 200, `${hostname}'s metrics at ${address}:${METRICS_PORT}`);
        const series = got.body.split('\n').filter((line) => line.startsWith('toolcell_'));
        assert.ok(series.length > 0, `${hostname} serves toolcell series`);
        const unlabelled = series.filter((line) => !line.includes(`node="${hostname}"`));
        assert.deepEqual(unlabelled.slice(0, 3), [], `every series of ${hostname} carries node="${hostname}"`);
        assert.match(got.body, new RegExp(`^toolcell_tool_calls_total\\{[^}]*node="${hostname}"`, 'm'), `${hostname} counted its calls`);
      }
    },
  },
  {
    name: '/readyz is 503 while a node’s server cannot reach etcd (its sessions still served), and 200 again once it can',
    async run(context) {
      const tenant = placedTenants()[2]!;
      const node = nodeNamed(context, tenant.node);
      const opened = await runScript(context, { key: tenant.key, steps: [writeStep('cut.txt', 'before the cut')], keep: true });
      assert.ok(succeeded(opened, 1), JSON.stringify(opened));
      // The node's own view of etcd is cut (every member's client port, dropped as a partition would), nothing else.
      const rule = ['OUTPUT', '-p', 'tcp', '--dport', '2379', '-m', 'comment', '--comment', 'tcsw etcd cut', '-j', 'DROP'];
      const iptables = (...args: string[]) => runCommand('ip', ['netns', 'exec', node.netns, 'iptables', '-w', '5', ...args]);
      const cutAt = Date.now();
      await iptables('-I', ...rule);
      let restored = false;
      try {
        await waitFor(
          `${node.hostname}'s /readyz to say 503`,
          async () => ((await hubServerGet(node, '/readyz')).status === 503 ? true : undefined),
          60_000,
          500,
        );
        const notReadyMs = Date.now() - cutAt;
        assert.equal((await hubServerGet(node, '/healthz')).status, 200, 'alive all the same');
        // Its session is served through the fronts (a session's node is chosen by liveness).
        const again = await runScript(context, { key: tenant.key, session: opened.session!, steps: [readStep('cut.txt')], keep: true });
        assert.ok(succeeded(again, 1) && again.results[0]!.text!.includes('before the cut'), JSON.stringify(again));
        await iptables('-D', ...rule);
        restored = true;
        const backAt = Date.now();
        await waitFor(
          `${node.hostname}'s /readyz to say 200`,
          async () => ((await hubServerGet(node, '/readyz')).status === 200 ? true : undefined),
          180_000,
          500,
        );
        context.figure(`etcd cut off from ${node.hostname}: /readyz 503 after ${notReadyMs} ms; reconnected: 200 after ${Date.now() - backAt} ms`);
      } finally {
        if (!restored) await iptables('-D', ...rule).catch(() => undefined);
        await runScript(context, { key: tenant.key, session: opened.session! });
      }
    },
  },
  {
    name: 'front: restarting every HAProxy (docker service update --force) loses no session of the real server',
    async run(context) {
      const tenants = placedTenants();
      const opened = await Promise.all(
        tenants.map((tenant) =>
          runScript(context, { key: tenant.key, steps: [writeStep('front.txt', `kept across the fronts' restart by ${tenant.name}`)], keep: true }),
        ),
      );
      for (const got of opened) assert.ok(succeeded(got, 1), JSON.stringify(got));
      await context.cluster.docker(manager(context), ['service', 'update', '--detach', '--force', `${STACK}_front`]);
      await waitFor('the front’s update to complete', async () => ((await updateCompleted(context, 'front')) ? true : undefined), 180_000, 1000);
      for (const [index, tenant] of tenants.entries()) {
        const read = await waitFor(
          `${tenant.name}'s session served again`,
          async () => {
            const got = await runScript(context, { key: tenant.key, session: opened[index]!.session!, steps: [readStep('front.txt')], keep: true });
            return succeeded(got, 1) ? got : undefined;
          },
          60_000,
          1000,
        );
        assert.match(read.results[0]!.text!, new RegExp(`by ${tenant.name}`));
        assert.equal(read.session, opened[index]!.session);
        await runScript(context, { key: tenant.key, session: opened[index]!.session! });
      }
    },
  },
  {
    name: 'rolling update of the real server (docker service update, one node at a time, each draining first): running calls finish with their result, every tenant served throughout',
    async run(context) {
      const tenants = placedTenants();
      const before = await serverIds(context);
      // A 15 s call kept running for every node not yet replaced (a new one every 6 s), so that a call is in flight when each node's turn comes.
      const calls: Promise<{ tenant: string; node: string; outcome: ScriptOutcome }>[] = [];
      const replaced = new Set<string>();
      const fire = () => {
        for (const tenant of tenants)
          if (!replaced.has(tenant.node))
            calls.push(
              runScript(context, { key: tenant.key, steps: [shell(`sleep 15; echo rolled-${tenant.name}`, 120_000)] }, 240_000).then((outcome) => ({
                tenant: tenant.name,
                node: tenant.node,
                outcome,
              })),
            );
      };
      fire();
      let firedAt = Date.now();
      await sleep(4000);
      const started = Date.now();
      await context.cluster.docker(manager(context), ['service', 'update', '--detach', '--force', `${STACK}_server`]);
      // Every round: one new session per tenant through the fronts.
      const rounds: { at: number; answers: { tenant: string; status: number; retryAfter?: string; body?: string }[] }[] = [];
      await waitFor(
        'the update to complete',
        async () => {
          const ids = await serverIds(context);
          for (const [host, id] of ids) if (id !== '' && id !== before.get(host)) replaced.add(host);
          if (Date.now() - firedAt > 6000) {
            fire();
            firedAt = Date.now();
          }
          const at = Date.now();
          const answers = await Promise.all(
            tenants.map(async (tenant) => {
              const got = await runScript(context, { key: tenant.key, initializeOnly: true }, 90_000);
              return { tenant: tenant.name, status: got.status ?? 0, ...(got.retryAfter ? { retryAfter: got.retryAfter } : {}), body: got.body ?? got.error };
            }),
          );
          rounds.push({ at, answers });
          return (await updateCompleted(context, 'server')) ? true : undefined;
        },
        600_000,
        500,
      );
      const updateMs = Date.now() - started;
      const finished = await Promise.all(calls);
      // When each node's drain began: its launcher says so, in its task container's log on its own
      // engine (`docker service logs` gathers every node's but can wait on tasks whose containers are gone).
      const drainAt = new Map<string, number>();
      for (const node of context.cluster.nodes) {
        const { stdout: ids } = await context.cluster.docker(node, ['ps', '-a', '-q', '--filter', `label=com.docker.swarm.service.name=${STACK}_server`]);
        for (const id of ids.split('\n').filter(Boolean)) {
          const { stdout: logs } = await context.cluster.docker(node, ['logs', '--timestamps', id], { timeoutMs: 60_000 });
          for (const line of logs.split('\n')) {
            const match = /^(\S+) toolcell-launcher (\S+): stopping: draining/.exec(line);
            if (match && match[2] === node.hostname && Date.parse(match[1]!) >= started) drainAt.set(node.hostname, Date.parse(match[1]!));
          }
        }
      }
      const spans: string[] = [];
      for (const node of context.cluster.nodes) {
        const at = drainAt.get(node.hostname);
        assert.ok(at !== undefined, `${node.hostname}'s launcher drained its server: ${[...drainAt.keys()].join(' ')}`);
        const across = finished.filter(
          (call) =>
            call.node === node.hostname &&
            call.outcome.results[0] !== undefined &&
            call.outcome.results[0].startedAt < at &&
            call.outcome.results[0].endedAt > at,
        );
        assert.ok(across.length > 0, `a call on ${node.hostname} was running when its drain began`);
        for (const call of across)
          assert.ok(succeeded(call.outcome, 1) && call.outcome.results[0]!.text!.includes(`rolled-${call.tenant}`), JSON.stringify(call));
        spans.push(`${node.hostname} ${across.length}`);
      }
      // No call that got its session failed; a call refused its session was refused with 503 (its node draining).
      for (const call of finished) {
        if (call.outcome.error !== undefined)
          assert.match(call.outcome.error, /503|"error":"unavailable"/, `${call.tenant}: refused only as unavailable: ${call.outcome.error}`);
        else assert.ok(succeeded(call.outcome, 1) && call.outcome.results[0]!.text!.includes(`rolled-${call.tenant}`), JSON.stringify(call));
      }
      // Every tenant served throughout: each answer a session or a 503 with Retry-After naming no host, never two tenants refused at once.
      const refusedMs = new Map<string, number>();
      for (const [index, round] of rounds.entries()) {
        const refused = round.answers.filter((answer) => answer.status !== 200);
        for (const answer of refused) {
          assert.equal(answer.status, 503, `${answer.tenant} at ${round.at - started} ms: ${JSON.stringify(answer)}`);
          assert.match(answer.retryAfter ?? '', /^\d+$/, `Retry-After: ${JSON.stringify(answer)}`);
          const next = rounds[index + 1]?.at ?? round.at;
          refusedMs.set(answer.tenant, (refusedMs.get(answer.tenant) ?? 0) + (next - round.at));
        }
        assert.ok(refused.length <= 1, `one node at a time: at ${round.at - started} ms ${JSON.stringify(refused)}`);
      }
      const after = await serverIds(context);
      for (const [host, id] of before) assert.notEqual(after.get(host), id, `${host}'s server was replaced`);
      context.figure(
        `rolling update of the real server over 3 nodes: ${updateMs} ms; calls in flight across each node's drain (all finished): ${spans.join(', ')}; ` +
          `${rounds.length} rounds of new sessions, refused (503) per tenant about ${[...refusedMs].map(([t, ms]) => `${t} ${ms} ms`).join(', ') || 'never'}`,
      );
    },
  },
];
