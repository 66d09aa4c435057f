import type { Etcd3 } from 'etcd3';
import { z } from 'zod';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { ClusterTenants } from './cluster-tenants.js';
import { keepLeasedRecord } from './leased-record.js';
import { nodeNameSchema } from './node-name.js';

/**
 * The nodes serving now: each server keeps `/toolcell/nodes/<node>` alive
 * under an etcd lease (10 s), with where the other nodes reach it and its
 * load. A node that stops or is lost drops out when its lease ends, so
 * placement never picks it and forwarding says 503 instead of waiting on it.
 */
export const NODES_PREFIX = '/toolcell/nodes/';

const nodeRecordSchema = z.strictObject({
  name: nodeNameSchema,
  /** Where the other nodes reach this node's server (`https://ADDRESS:PORT`). */
  url: z.url(),
  /** Sessions open on it when it last said. */
  sessions: z.number().int().min(0),
  /** toolcell's version on it (a rolling update shows here). */
  version: z.string(),
});

export type NodeRecord = z.infer<typeof nodeRecordSchema>;

/** Registers this node until `close()`; the record is refreshed every 3 s with `sessions()`. */
export function registerNode(
  etcd: Etcd3,
  record: Omit<NodeRecord, 'sessions'>,
  sessions: () => number,
  onLog: (message: string) => void,
): Promise<{ close(): Promise<void> }> {
  return keepLeasedRecord(etcd, {
    key: `${NODES_PREFIX}${record.name}`,
    render: () => JSON.stringify({ ...record, sessions: sessions() }),
    what: "this node's registration",
    onLog,
  });
}

/** The nodes serving now, by name. A record that does not parse is skipped (a newer version's, say). */
export async function servingNodes(etcd: Etcd3): Promise<Map<string, NodeRecord>> {
  const values = await etcd.getAll().prefix(NODES_PREFIX).strings();
  const nodes = new Map<string, NodeRecord>();
  for (const text of Object.values(values)) {
    try {
      const record = nodeRecordSchema.parse(JSON.parse(text));
      nodes.set(record.name, record);
    } catch {
      // Not ours to judge: it is left alone.
    }
  }
  return nodes;
}

/**
 * Where a new tenant goes: the serving node with the fewest tenants placed
 * on it, then the fewest sessions open, then by name (so that equal nodes
 * are filled in a fixed order).
 */
export function chooseNode(nodes: Map<string, NodeRecord>, doc: ClusterTenants): string {
  if (nodes.size === 0)
    throw new ToolcellError(
      ToolErrorType.INVALID_INPUT,
      'no toolcell server is serving in this cluster (none registered in etcd): start the servers, or give --node',
    );
  const placed = new Map<string, number>();
  for (const node of Object.values(doc.placement)) placed.set(node, (placed.get(node) ?? 0) + 1);
  return [...nodes.values()].sort(
    (a, b) => (placed.get(a.name) ?? 0) - (placed.get(b.name) ?? 0) || a.sessions - b.sessions || a.name.localeCompare(b.name),
  )[0]!.name;
}
