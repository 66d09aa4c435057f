import type { Etcd3 } from 'etcd3';
import { z } from 'zod';
import { keepLeasedRecord, type LeasedRecord } from './leased-record.js';
import { nodeNameSchema } from './node-name.js';
import { servingNodes } from './node-registry.js';

/**
 * Which change to the cluster's tenants each node enforces: every server
 * keeps `/toolcell/tenants-applied/<node>` (under a lease, like its
 * registration) holding the etcd revision of the tenants document its
 * tenants store has in force, written as soon as a reload takes it. So
 * `toolcell tenant add|set|revoke|remove --etcd` can return once every
 * serving node holds the change (a new key then opens a session on any
 * node; a revoked one is refused on all), instead of when etcd took it. A
 * separate key, not a field of the node's registration, so that nodes of
 * an older version (which read registrations strictly) still see the newer
 * ones serving during a rolling update.
 */
export const TENANTS_APPLIED_PREFIX = '/toolcell/tenants-applied/';

const appliedRecordSchema = z.object({ node: nodeNameSchema, revision: z.string().regex(/^\d+$/) });

/** Publishes `inForce()` (a revision) for `node` until `close()`; `refresh()` after it grows. */
export function publishTenantsApplied(etcd: Etcd3, node: string, inForce: () => bigint, onLog: (message: string) => void): Promise<LeasedRecord> {
  return keepLeasedRecord(etcd, {
    key: `${TENANTS_APPLIED_PREFIX}${node}`,
    render: () => JSON.stringify({ node, revision: inForce().toString() }),
    what: 'the tenants this node enforces',
    onLog,
  });
}

/** The serving nodes by whether they enforce a revision: at or past it, not yet, or saying nothing (an older toolcell). */
export interface TenantsAppliedState {
  applied: string[];
  pending: string[];
  silent: string[];
}

/** Where the serving nodes stand now with regard to `revision`. */
async function tenantsAppliedState(etcd: Etcd3, revision: string): Promise<TenantsAppliedState> {
  const [nodes, values] = await Promise.all([servingNodes(etcd), etcd.getAll().prefix(TENANTS_APPLIED_PREFIX).strings()]);
  const reported = new Map<string, bigint>();
  for (const text of Object.values(values)) {
    try {
      const record = appliedRecordSchema.parse(JSON.parse(text));
      reported.set(record.node, BigInt(record.revision));
    } catch {
      // Not ours to judge: that node counts as saying nothing.
    }
  }
  const wanted = BigInt(revision);
  const state: TenantsAppliedState = { applied: [], pending: [], silent: [] };
  for (const name of [...nodes.keys()].sort()) {
    const at = reported.get(name);
    if (at === undefined) state.silent.push(name);
    else (at >= wanted ? state.applied : state.pending).push(name);
  }
  return state;
}

/**
 * Waits until no serving node is behind `revision`, or `timeoutMs` has
 * passed; resolves with where they stand then. A node that stops serving
 * meanwhile (its registration's lease ends) is no longer waited for.
 */
export async function waitForTenantsApplied(etcd: Etcd3, options: { revision: string; timeoutMs: number }): Promise<TenantsAppliedState> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const state = await tenantsAppliedState(etcd, options.revision);
    if (state.pending.length === 0 || Date.now() >= deadline) return state;
    // A reload takes milliseconds; a tenth of a second between looks keeps the command quick and etcd idle.
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, Math.max(0, deadline - Date.now()))));
  }
}
