/**
 * Shared state in an existing store: Debian's etcd 3.4, one member per
 * node run by the Swarm, TLS between members and to clients. Its client
 * port is published in host mode on each member's node; the checks are a
 * client in the hub, as a node's server would be on its node's network.
 */
import assert from 'node:assert/strict';
import { waitFor } from '../../helpers/cluster/run-command.js';
import { CERTS_DIR, hubProbe, type ClusterCheck } from '../context.js';

/** The members' list, as one member's gateway answers it (its name list), or undefined when it does not answer. */
async function members(address: string): Promise<string[] | undefined> {
  const { results } = await hubProbe<{ results: { status: number; body: string }[] }>(
    'etcd-call',
    [CERTS_DIR, `${address}:2379`, '/v3/cluster/member/list', '{}'],
    30_000,
  );
  const answer = results[0];
  if (answer?.status !== 200) return undefined;
  return ((JSON.parse(answer.body) as { members?: { name: string }[] }).members ?? []).map((m) => m.name).sort();
}

export const etcdChecks: ClusterCheck[] = [
  {
    name: 'etcd: three members form one cluster over TLS, each answering on its node',
    async run(context) {
      for (const node of context.cluster.nodes) {
        const names = await waitFor(
          `etcd on ${node.hostname}`,
          async () => {
            const got = await members(node.address).catch(() => undefined);
            return got?.length === 3 && got.every(Boolean) ? got : undefined;
          },
          120_000,
          1000,
        );
        assert.deepEqual(names, ['etcd1', 'etcd2', 'etcd3']);
      }
    },
  },
  {
    name: 'etcd: a change written on one node reaches a watcher on another node within 2 s',
    async run(context) {
      const [first, , third] = context.cluster.nodes;
      const { latenciesMs } = await hubProbe<{ latenciesMs: number[] }>('etcd-watch', [
        CERTS_DIR,
        `${third!.address}:2379`,
        `${first!.address}:2379`,
        '10',
        'toolcell/probe/watch',
      ]);
      assert.equal(latenciesMs.length, 10);
      const sorted = [...latenciesMs].sort((a, b) => a - b);
      context.figure(
        `etcd watch across nodes (put on ${first!.hostname}, watch on ${third!.hostname}), 10 rounds: median ${sorted[5]} ms, max ${sorted[9]} ms`,
      );
    },
  },
];
