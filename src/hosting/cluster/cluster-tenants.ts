import type { Etcd3 } from 'etcd3';
import { z } from 'zod';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { assignTenantUids } from '../tenants/tenant-uid.js';
import { emptyTenantsFile, parseTenantsFile, TENANT_NAME, type TenantsFile } from '../tenants/tenants-file.js';
import { nodeNameSchema } from './node-name.js';
import { tenantMoveSchema, tenantRemovalSchema, type TenantMove, type TenantRemoval } from './tenant-moves.js';

/**
 * The cluster's tenants: one etcd key holding the tenants file every node
 * serves (keys as SHA-256 hashes, limits, uids: the same JSON as a single
 * host's file, checked the same way) and where each tenant lives. One key,
 * so that a change is one compare-and-swap on its revision: two operators
 * adding tenants at once never lose one, and a tenant is never placed
 * without its keys. etcd keeps it (Raft, three members): nothing of our own
 * replicates anything.
 */
export const CLUSTER_TENANTS_KEY = '/toolcell/tenants';

const clusterTenantsSchema = z.strictObject({
  /** The tenants file every node's server hosts from (its local copy is written from this). */
  tenants: z.unknown(),
  /** tenant → the node it lives on (its workspace and disk cap are there). */
  placement: z.record(z.string().regex(TENANT_NAME), nodeNameSchema),
  /** tenant → its move in progress (tenant-moves.ts); absent: none. */
  moves: z.record(z.string().regex(TENANT_NAME), tenantMoveSchema).optional(),
  /** tenant → the node still to delete a removed tenant's files (tenant-moves.ts); absent: none. */
  removals: z.record(z.string().regex(TENANT_NAME), tenantRemovalSchema).optional(),
});

export interface ClusterTenants {
  tenants: TenantsFile;
  placement: Record<string, string>;
  moves: Record<string, TenantMove>;
  removals: Record<string, TenantRemoval>;
}

/** The document as stored, checked; `where` names it in errors. */
export function parseClusterTenants(text: string, where: string): ClusterTenants {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ToolcellError(ToolErrorType.INVALID_TENANTS_FILE, `${where} is not valid JSON`);
  }
  const parsed = clusterTenantsSchema.safeParse(value);
  if (!parsed.success) throw new ToolcellError(ToolErrorType.INVALID_TENANTS_FILE, `${where}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const { placement, moves = {}, removals = {} } = parsed.data;
  return { tenants: parseTenantsFile(where, parsed.data.tenants), placement, moves, removals };
}

/** The cluster's tenants now and the revision they were read at (0: none yet). */
export async function readClusterTenants(etcd: Etcd3): Promise<{ doc: ClusterTenants; revision: string }> {
  const answer = await etcd.get(CLUSTER_TENANTS_KEY).exec();
  const kv = answer.kvs[0];
  if (kv === undefined) return { doc: { tenants: emptyTenantsFile(), placement: {}, moves: {}, removals: {} }, revision: '0' };
  return { doc: parseClusterTenants(kv.value.toString('utf8'), `etcd ${CLUSTER_TENANTS_KEY}`), revision: kv.mod_revision };
}

/**
 * Changes the cluster's tenants: `change` edits a fresh copy (and may throw
 * to change nothing); the result is checked as a tenants file and written
 * only if nobody wrote in between, else read and changed again (at most 10
 * times). Returns the document written and its revision.
 */
export async function updateClusterTenants(
  etcd: Etcd3,
  change: (doc: ClusterTenants) => void | Promise<void>,
): Promise<{ doc: ClusterTenants; revision: string }> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const { doc, revision } = await readClusterTenants(etcd);
    await change(doc);
    assignTenantUids(doc.tenants);
    parseTenantsFile(`etcd ${CLUSTER_TENANTS_KEY}`, doc.tenants);
    for (const name of Object.keys(doc.placement)) if (doc.tenants.tenants[name] === undefined) delete doc.placement[name];
    for (const name of Object.keys(doc.moves)) if (doc.tenants.tenants[name] === undefined) delete doc.moves[name];
    // Written only when there are some, so a cluster that never moved or removed a tenant keeps the document it had.
    const text = JSON.stringify({
      tenants: doc.tenants,
      placement: doc.placement,
      ...(Object.keys(doc.moves).length > 0 ? { moves: doc.moves } : {}),
      ...(Object.keys(doc.removals).length > 0 ? { removals: doc.removals } : {}),
    });
    const written = await etcd.if(CLUSTER_TENANTS_KEY, 'Mod', '==', revision).then(etcd.put(CLUSTER_TENANTS_KEY).value(text)).commit();
    // The put's revision is the transaction's: what a node reports once it has applied this document (tenants-applied.ts).
    if (written.succeeded) return { doc, revision: written.header.revision };
  }
  throw new ToolcellError(ToolErrorType.INVALID_TENANTS_FILE, `etcd ${CLUSTER_TENANTS_KEY} kept changing under this update (10 tries); try again`);
}
