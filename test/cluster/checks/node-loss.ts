/**
 * A node lost (its whole engine killed at once, as a machine that dies) and
 * back again: its sessions get 503 with Retry-After and a body naming no
 * host, every other session and new sessions are served, etcd keeps its
 * quorum; back, the node serves again and its etcd member catches up from
 * its own volume.
 */
import assert from 'node:assert/strict';
import type { ClusterNode } from '../../helpers/cluster/layout.js';
import { waitFor } from '../../helpers/cluster/run-command.js';
import { CERTS_DIR, hubProbe, hubServerGet, type ClusterCheck, type ClusterContext } from '../context.js';
import { followSessions, fronts, openSessions } from './front.js';

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
    name: 'a node lost: its sessions get 503 + Retry-After naming no host, the others and new sessions are served, etcd keeps quorum; back, it serves again',
    async run(context: ClusterContext) {
      const [first, lost, third] = context.cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
      const opened = await openSessions(fronts(context), 24);
      assert.deepEqual(opened.failures, []);
      assert.ok(
        opened.sessions.some((s) => s.node === lost.hostname),
        'some sessions live on the node to lose',
      );
      await put(first.address, 'before');

      const killedAt = Date.now();
      await context.cluster.killNode(lost);
      const survivors = fronts(context, [lost.hostname]);

      // Its sessions: 503 from the front, with Retry-After, and a body that names no host.
      const followed = await waitFor(
        'the fronts to answer the lost node’s sessions',
        async () => {
          const got = await followSessions(survivors, opened, 1, 'node-loss');
          return got.answers.every((a) => a.status !== 0) ? got : undefined;
        },
        60_000,
        1000,
      );
      for (const answer of followed.answers) {
        if (answer.expected === lost.hostname) {
          assert.equal(answer.status, 503, JSON.stringify(answer));
          assert.match(answer.retryAfter ?? '', /^\d+$/, 'Retry-After says when');
          assert.doesNotMatch(answer.body, /10\.21|tcsw|n\d\b|etcd|haproxy/i, `the body names no host: ${answer.body}`);
        } else {
          assert.equal(answer.status, 200, JSON.stringify(answer));
          assert.equal(answer.node, answer.expected);
        }
      }
      // New sessions keep opening, on the nodes left, once the fronts' health checks have seen the loss.
      const fresh = await waitFor(
        'new sessions served by the nodes left',
        async () => {
          const got = await openSessions(survivors, 9);
          return got.failures.length === 0 ? got : undefined;
        },
        60_000,
        1000,
      );
      assert.ok(fresh.sessions.every((s) => s.node !== lost.hostname));
      context.figure(`node lost → its sessions 503 and new sessions served elsewhere within ${Date.now() - killedAt} ms (health checks every 2 s, 2 failures)`);

      // etcd: two of three members keep the quorum: a write on one node is read on the other.
      await put(first.address, 'during');
      assert.equal(await etcdValue(third.address), 'during');

      // Back: the same engine and data root, as a machine rebooted. Three things come back, each timed from the engine's start.
      const backAt = Date.now();
      await context.cluster.startNode(lost);
      const timed = async (what: Promise<unknown>) => {
        await what;
        return Date.now() - backAt;
      };
      const [serverMs, etcdMs, frontsMs] = await Promise.all([
        timed(waitFor(`${lost.hostname}'s server back`, async () => ((await hubServerGet(lost, '/readyz')).status === 200 ? true : undefined), 240_000, 1000)),
        timed(
          waitFor(
            `${lost.hostname}'s etcd member caught up`,
            async () => ((await etcdValue(lost.address).catch(() => undefined)) === 'during' ? true : undefined),
            240_000,
            1000,
          ),
        ),
        timed(
          waitFor(
            'the node’s old sessions served again through the fronts',
            async () => {
              const got = await followSessions(fronts(context), opened, 1, 'node-back');
              return got.answers.every((a) => a.status === 200 && a.node === a.expected) ? got : undefined;
            },
            240_000,
            1000,
          ),
        ),
      ]);
      context.figure(
        `node back, from its engine's start: its server ready ${serverMs} ms, its etcd member caught up ${etcdMs} ms, its sessions served through the fronts ${frontsMs} ms`,
      );
    },
  },
];
