import type { Etcd3 } from 'etcd3';
import { z } from 'zod';
import { keepLeasedRecord } from './leased-record.js';
import { nodeNameSchema } from './node-name.js';

/**
 * Every node's live sessions, for `toolcell hosting sessions --etcd`: each
 * server keeps `/toolcell/sessions/<node>` current under a lease of its own
 * (gone 10 s after the node is, at once when it drains), written when its
 * sessions changed, at most every 3 s, at most MAX_SESSIONS of them (the
 * oldest; `more` counts the rest), so a node never writes an unbounded value
 * into the cluster's store. Beside the node record (node-registry.ts),
 * not in it: that one is read for every forwarded session and stays small.
 */
export const SESSIONS_PREFIX = '/toolcell/sessions/';
export const MAX_SESSIONS = 500;

const summarySchema = z.strictObject({
  node: nodeNameSchema,
  sessions: z
    .array(
      z.strictObject({
        id: z.string().max(200),
        tenant: z.string().max(100),
        subject: z.string().max(500),
        via: z.enum(['api_key', 'oidc']),
        /** When it opened (ms since the epoch), so its age needs no rewrite every second. */
        openedAt: z.number(),
        calls: z.number().int().min(0),
        runtime: z.string().max(100).optional(),
      }),
    )
    .max(MAX_SESSIONS),
  /** Sessions left out past MAX_SESSIONS. */
  more: z.number().int().min(0),
});

/** One session of the cluster, as `toolcell hosting sessions --etcd` lists it. */
export interface ClusterSession {
  node: string;
  id: string;
  tenant: string;
  subject: string;
  via: 'api_key' | 'oidc';
  ageMs: number;
  calls: number;
  runtime?: string;
}

/** A hosting server's session as it lists them (HostingServer.listSessions). */
type LocalSession = Omit<ClusterSession, 'node'>;

/** Publishes this node's sessions until `close()` (which removes them at once). */
export function publishSessions(etcd: Etcd3, node: string, list: () => LocalSession[], onLog: (message: string) => void): Promise<{ close(): Promise<void> }> {
  const render = () => {
    const now = Date.now();
    // Opened-at to the second: a session's record then changes only when its calls do.
    const all = list().map((session) => ({
      id: session.id,
      tenant: session.tenant,
      subject: session.subject.slice(0, 500),
      via: session.via,
      openedAt: Math.round((now - session.ageMs) / 1000) * 1000,
      calls: session.calls,
      ...(session.runtime !== undefined ? { runtime: session.runtime } : {}),
    }));
    return JSON.stringify({ node, sessions: all.slice(0, MAX_SESSIONS), more: Math.max(0, all.length - MAX_SESSIONS) });
  };
  return keepLeasedRecord(etcd, { key: `${SESSIONS_PREFIX}${node}`, render, what: "this node's sessions", onLog });
}

/** Every serving node's sessions, oldest first; `more` counts those the nodes left out. A record that does not parse is skipped. */
export async function clusterSessions(etcd: Etcd3): Promise<{ sessions: ClusterSession[]; more: number }> {
  const values = await etcd.getAll().prefix(SESSIONS_PREFIX).strings();
  const now = Date.now();
  const sessions: ClusterSession[] = [];
  let more = 0;
  for (const text of Object.values(values)) {
    let summary: z.infer<typeof summarySchema>;
    try {
      summary = summarySchema.parse(JSON.parse(text));
    } catch {
      continue;
    }
    more += summary.more;
    for (const { openedAt, ...session } of summary.sessions) sessions.push({ node: summary.node, ...session, ageMs: Math.max(0, now - openedAt) });
  }
  sessions.sort((a, b) => b.ageMs - a.ageMs || a.node.localeCompare(b.node));
  return { sessions, more };
}
