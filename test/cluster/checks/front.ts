/**
 * The front: HAProxy 2.6 on every node routing MCP sessions by the node
 * prefix of their id (haproxy.cfg.tmpl), with no state of its own: every
 * later request reaches the session's node whichever front it enters, and a
 * restart of the fronts loses no session.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STATE_ROOT } from '../../helpers/cluster/layout.js';
import { CERTS_DIR, FRONT_PORT, hubGet, hubProbe, type ClusterCheck, type ClusterContext } from '../context.js';

export interface OpenedSessions {
  sessions: { id: string; node: string }[];
  failures: string[];
}

export interface FollowAnswers {
  answers: { id: string; expected: string; front: string; status: number; node?: string; retryAfter?: string; body: string }[];
}

export function fronts(context: ClusterContext, except: string[] = []): string {
  return context.cluster.nodes
    .filter((node) => !except.includes(node.hostname))
    .map((node) => `${node.address}:${FRONT_PORT}`)
    .join(',');
}

/** Opens `count` sessions through the given fronts (HTTPS, their certificate checked). */
export function openSessions(context: ClusterContext, frontList: string, count: number): Promise<OpenedSessions> {
  return hubProbe<OpenedSessions>('front-sessions', ['open', context.frontCa, frontList, String(count)]);
}

/** Sends `rounds` later requests of each session, each through a front picked at random. */
export async function followSessions(
  context: ClusterContext,
  frontList: string,
  sessions: OpenedSessions,
  rounds: number,
  name: string,
): Promise<FollowAnswers> {
  const file = join(STATE_ROOT, `${name}.json`);
  await writeFile(file, JSON.stringify(sessions));
  return hubProbe<FollowAnswers>('front-sessions', ['follow', context.frontCa, frontList, file, String(rounds)]);
}

const misrouted = (answers: FollowAnswers) => answers.answers.filter((a) => a.status !== 200 || a.node !== a.expected);

export const frontChecks: ClusterCheck[] = [
  {
    name: 'front: clients get TLS; without --front-cert, deploy.sh made one from the cluster’s CA naming every node’s address; a client not trusting it is refused',
    async run(context) {
      for (const node of context.cluster.nodes) {
        const url = `https://${node.address}:${FRONT_PORT}/healthz`;
        const checked = await hubGet(url, ['--cacert', join(CERTS_DIR, 'ca.pem')]);
        assert.equal(checked.status, 200, `${url} with the cluster's CA: ${checked.body}`);
        const untrusted = await hubGet(url);
        assert.equal(untrusted.status, 0, `a client that does not trust the CA is refused: ${untrusted.body}`);
        assert.match(untrusted.body, /exit 60\b/, 'curl: the peer certificate cannot be verified');
        const plain = await hubGet(`http://${node.address}:${FRONT_PORT}/healthz`);
        assert.notEqual(plain.status, 200, 'no plain HTTP at the front');
      }
    },
  },
  {
    name: 'front: new sessions go to any node; every later request, through any front, reaches the session’s node',
    async run(context) {
      const opened = await openSessions(context, fronts(context), 30);
      assert.deepEqual(opened.failures, []);
      const spread = new Map<string, number>();
      for (const session of opened.sessions) spread.set(session.node, (spread.get(session.node) ?? 0) + 1);
      assert.equal(spread.size, context.cluster.nodes.length, `new sessions reach every node: ${[...spread].join(' ')}`);
      const followed = await followSessions(context, fronts(context), opened, 3, 'front-routing');
      assert.equal(followed.answers.length, 90);
      assert.deepEqual(misrouted(followed), []);
      context.figure(
        `front routing: 30 new sessions spread ${[...spread].map(([n, c]) => `${n}=${c}`).join(' ')}; 90 later requests through random fronts, ${misrouted(followed).length} off their node`,
      );
      // An id naming no node is not an error of the front: some node answers it, as an unknown session.
      const unknown = await followSessions(context, fronts(context), { sessions: [{ id: 'nosuchnode.0123', node: '-' }], failures: [] }, 1, 'front-unknown');
      assert.equal(unknown.answers[0]?.status, 404, JSON.stringify(unknown.answers[0]));
    },
  },
];
