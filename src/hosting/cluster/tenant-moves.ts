import { z } from 'zod';
import { nodeNameSchema } from './node-name.js';

/**
 * A tenant's move from one node to another, as a state machine kept in the
 * cluster's tenants document (cluster-tenants.ts), so that whoever crashes
 * (either node, the operator's command) the next one to look finds where it
 * stood, and every step is one compare-and-swap on the document's revision:
 *
 *   draining  the old node's turn: refuses the tenant's new sessions, lets
 *             running calls finish (at most drainSeconds), closes its
 *             sessions, unmounts its workspace and records its size and
 *             SHA-256 (`workspace`), then → copying
 *   copying   the new node's turn: fetches the workspace from the old node
 *             over their mutually authenticated TLS link, checks size and
 *             SHA-256, keeps it aside, then re-pins the tenant (placement →
 *             the new node) and → pinned, in one transaction
 *   pinned    the new node's turn: puts the copy in place, then → cleaning
 *   cleaning  the old node's turn: deletes its copy, then the move record
 *
 * The tenant's new sessions are refused (503 with Retry-After) from
 * `draining` until its copy is in place (`cleaning`), on every node. Before
 * `pinned` a move can be given up (`tenant move --abort`): the record goes,
 * the tenant stays where it was with its workspace untouched, and the new
 * node deletes what it had fetched. From `pinned` on it can only finish.
 */
export const MOVE_PHASES = ['draining', 'copying', 'pinned', 'cleaning'] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];

export const tenantMoveSchema = z.strictObject({
  /** This move's own id: a node's step for an earlier move of the same tenant never applies to it. */
  id: z.string().regex(/^[a-f0-9]{16,64}$/),
  from: nodeNameSchema,
  to: nodeNameSchema,
  /** When the operator asked (ISO 8601). */
  since: z.string().max(64),
  /** How long the old node lets running calls finish before it closes the tenant's sessions. */
  drainSeconds: z.number().int().min(0).max(3600),
  phase: z.enum(MOVE_PHASES),
  /** What the new node must receive, recorded by the old one once drained: its disk image (`image`), or nothing (`none`: it never had a session there). */
  workspace: z.strictObject({ kind: z.enum(['image', 'none']), bytes: z.number().int().min(0), sha256: z.string().regex(/^[a-f0-9]{64}$/) }).optional(),
  /** Why the current step cannot go on as things are (the node tries again; the operator may abort). */
  problem: z.string().max(500).optional(),
});

export type TenantMove = z.infer<typeof tenantMoveSchema>;

/**
 * A removed tenant whose files are still on its node: that node deletes them
 * (tenant-handover.ts) and then the record. A tenant of the same name cannot
 * be added again meanwhile (it would find them).
 */
export const tenantRemovalSchema = z.strictObject({
  node: nodeNameSchema,
  since: z.string().max(64),
});

export type TenantRemoval = z.infer<typeof tenantRemovalSchema>;

/** Whether a tenant's new sessions are refused on every node: a move has not put its workspace in place yet, or it was removed. */
export function tenantOnHold(doc: { moves: Record<string, TenantMove>; removals: Record<string, TenantRemoval> }, tenant: string): boolean {
  const move = doc.moves[tenant];
  return (move !== undefined && move.phase !== 'cleaning') || doc.removals[tenant] !== undefined;
}
