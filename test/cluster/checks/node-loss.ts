/**
 * A node lost during calls (its whole engine killed at once, as a machine
 * that dies) and back again, with the real toolcell server: its tenants'
 * new sessions get 503 with Retry-After and a body naming no host, every
 * other tenant is served and its running call finishes; etcd keeps its
 * quorum. Back, the node's tenants work again with their workspaces as
 * they were (a file written before the loss is read after), and its etcd
 * member catches up from its own volume.
 */
import assert from 'node:assert/strict';
import type { ClusterNode } from '../../helpers/cluster/layout.js';
import { waitFor } from '../../helpers/cluster/run-command.js';
import { CERTS_DIR, hubProbe, hubServerGet, type ClusterCheck, type ClusterContext } from '../context.js';
import { fronts } from './front.js';
import { NAMES_A_HOST, readStep, runScript, shell, sleep, succeeded, writeStep } from './sessions.js';
import { placedTenants } from './toolcell.js';

const KEY = Buffer.from('toolcell/probe/quorum').toString('base64');

async function etcdCall(address: string, path: string, body: object): Promise<{ status: number; body: string }> {
  const { results } = await hubProbe<{ results: { status: number; body: string }[] }>(
    'etcd-call',
    [CERTS_DIR, `${address}:2379`, path, JSON.stringify(body)],
    30_000,
  );
  return results[0]!;
}

async function etcdValue(address: string): Promise<string | undefined> {
  const answer = await etcdCall(address, '/v3/kv/range', { key: KEY });
  if (answer.status !== 200) return undefined;
  const kv = (JSON.parse(answer.body) as { kvs?: { value: string }[] }).kvs?.[0];
  return kv === undefined ? undefined : Buffer.from(kv.value, 'base64').toString();
}

async function put(address: string, value: string): Promise<void> {
  const answer = await etcdCall(address, '/v3/kv/put', { key: KEY, value: Buffer.from(value).toString('base64') });
  assert.equal(answer.status, 200, `put through ${address}: ${answer.body}`);
}

export const nodeLossChecks: ClusterCheck[] = [
  {
    name: 'a node lost during calls: its tenant’s new sessions get 503 + Retry-After naming no host, the other tenants are served and their calls finish; back, its workspace is intact',
    async run(context: ClusterContext) {
      const [first, lost, third] = context.cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
      const tenants = placedTenants();
      const victim = tenants.find((tenant) => tenant.node === lost.hostname)!;
      const others = tenants.filter((tenant) => tenant !== victim);
      const survivors = fronts(context, [lost.hostname]).split(',');
      // Before: every tenant leaves a file in its workspace.
      const written = new Map<string, string>();
      for (const tenant of tenants) {
        const content = `written before the loss by ${tenant.name} ${Date.now()}`;
        const got = await runScript(context, { key: tenant.key, steps: [writeStep('kept.txt', content)] });
        assert.ok(succeeded(got, 1), JSON.stringify(got));
        written.set(tenant.name, content);
      }
      await put(first.address, 'before');

      // Calls running on every node (clients of the fronts that stay), then the node dies.
      const running = tenants.map((tenant) =>
        runScript(context, { key: tenant.key, fronts: survivors, steps: [shell(`sleep 12; echo survived-${tenant.name}`, 60_000)] }, 180_000),
      );
      await sleep(5000);
      const killedAt = Date.now();
      await context.cluster.killNode(lost);

      // Its tenant: new sessions refused with 503, Retry-After, and a body naming no host.
      const refused = await waitFor(
        `${victim.name}'s new sessions refused as unavailable`,
        async () => {
          const got = await runScript(context, { key: victim.key, fronts: survivors, initializeOnly: true }, 90_000);
          return got.status === 503 ? got : undefined;
        },
        90_000,
        1000,
      );
      const refusedMs = Date.now() - killedAt;
      assert.match(refused.retryAfter ?? '', /^\d+$/, `Retry-After says when: ${JSON.stringify(refused)}`);
      assert.doesNotMatch(refused.body ?? '', NAMES_A_HOST, `the body names no host: ${refused.body}`);
      // Every other tenant: a new session and its workspace, served by the nodes left.
      for (const tenant of others) {
        const got = await waitFor(
          `${tenant.name} served by the nodes left`,
          async () => {
            const outcome = await runScript(context, { key: tenant.key, fronts: survivors, steps: [readStep('kept.txt')] });
            return succeeded(outcome, 1) ? outcome : undefined;
          },
          60_000,
          1000,
        );
        assert.ok(got.results[0]!.text!.includes(written.get(tenant.name)!));
      }
      const calls = await Promise.all(running);
      for (const [index, tenant] of tenants.entries()) {
        if (tenant === victim) continue;
        assert.ok(succeeded(calls[index]!, 1) && calls[index]!.results[0]!.text!.includes(`survived-${tenant.name}`), JSON.stringify(calls[index]));
      }
      context.figure(`node lost → its tenant's new sessions 503 after ${refusedMs} ms; the others served, their running calls finished`);

      // etcd: two of three members keep the quorum: a write on one node is read on the other.
      await put(first.address, 'during');
      assert.equal(await etcdValue(third.address), 'during');

      // Back: the same engine and data root, as a machine rebooted.
      const backAt = Date.now();
      await context.cluster.startNode(lost);
      const timed = async (what: Promise<unknown>) => {
        await what;
        return Date.now() - backAt;
      };
      const [serverMs, etcdMs, tenantMs] = await Promise.all([
        timed(waitFor(`${lost.hostname}'s server back`, async () => ((await hubServerGet(lost, '/readyz')).status === 200 ? true : undefined), 300_000, 1000)),
        timed(
          waitFor(
            `${lost.hostname}'s etcd member caught up`,
            async () => ((await etcdValue(lost.address).catch(() => undefined)) === 'during' ? true : undefined),
            300_000,
            1000,
          ),
        ),
        timed(
          waitFor(
            `${victim.name} served again, its workspace as it was`,
            async () => {
              const outcome = await runScript(context, { key: victim.key, steps: [readStep('kept.txt')] });
              return succeeded(outcome, 1) && outcome.results[0]!.text!.includes(written.get(victim.name)!) ? true : undefined;
            },
            300_000,
            2000,
          ),
        ),
      ]);
      context.figure(
        `node back, from its engine's start: its server ready ${serverMs} ms, its etcd member caught up ${etcdMs} ms, its tenant served with its workspace ${tenantMs} ms`,
      );
    },
  },
];
