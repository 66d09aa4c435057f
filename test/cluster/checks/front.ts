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
import { waitFor } from '../../helpers/cluster/run-command.js';
import { FRONT_PORT, hubProbe, manager, STACK, type ClusterCheck, type ClusterContext } from '../context.js';

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

/** Opens `count` sessions through the given fronts. */
export function openSessions(frontList: string, count: number): Promise<OpenedSessions> {
  return hubProbe<OpenedSessions>('front-sessions', ['open', frontList, String(count)]);
}

/** Sends `rounds` later requests of each session, each through a front picked at random. */
export async function followSessions(frontList: string, sessions: OpenedSessions, rounds: number, name: string): Promise<FollowAnswers> {
  const file = join(STATE_ROOT, `${name}.json`);
  await writeFile(file, JSON.stringify(sessions));
  return hubProbe<FollowAnswers>('front-sessions', ['follow', frontList, file, String(rounds)]);
}

const misrouted = (answers: FollowAnswers) => answers.answers.filter((a) => a.status !== 200 || a.node !== a.expected);

export const frontChecks: ClusterCheck[] = [
  {
    name: 'front: new sessions go to any node; every later request, through any front, reaches the session’s node',
    async run(context) {
      const opened = await openSessions(fronts(context), 30);
      assert.deepEqual(opened.failures, []);
      const spread = new Map<string, number>();
      for (const session of opened.sessions) spread.set(session.node, (spread.get(session.node) ?? 0) + 1);
      assert.equal(spread.size, context.cluster.nodes.length, `new sessions reach every node: ${[...spread].join(' ')}`);
      const followed = await followSessions(fronts(context), opened, 3, 'front-routing');
      assert.equal(followed.answers.length, 90);
      assert.deepEqual(misrouted(followed), []);
      context.figure(
        `front routing: 30 new sessions spread ${[...spread].map(([n, c]) => `${n}=${c}`).join(' ')}; 90 later requests through random fronts, ${misrouted(followed).length} off their node`,
      );
      // An id naming no node is not an error of the front: some node answers it, as an unknown session.
      const unknown = await followSessions(fronts(context), { sessions: [{ id: 'nosuchnode.0123', node: '-' }], failures: [] }, 1, 'front-unknown');
      assert.equal(unknown.answers[0]?.status, 404, JSON.stringify(unknown.answers[0]));
    },
  },
  {
    name: 'front: restarting every HAProxy (docker service update --force) loses no session',
    async run(context) {
      const opened = await openSessions(fronts(context), 12);
      assert.deepEqual(opened.failures, []);
      const node = manager(context);
      await context.cluster.docker(node, ['service', 'update', '--detach', '--force', `${STACK}_front`]);
      await waitFor(
        'the front’s update to complete',
        async () => {
          const state = (await context.cluster.docker(node, ['service', 'inspect', '--format', '{{.UpdateStatus.State}}', `${STACK}_front`])).stdout.trim();
          return state === 'completed' ? true : undefined;
        },
        180_000,
      );
      const followed = await waitFor(
        'every front to answer again',
        async () => {
          const got = await followSessions(fronts(context), opened, 2, 'front-restart');
          return got.answers.every((a) => a.status !== 0 && a.status !== 503) ? got : undefined;
        },
        60_000,
        1000,
      );
      assert.deepEqual(misrouted(followed), []);
    },
  },
];
