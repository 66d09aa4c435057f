import { randomBytes } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { readClusterTenants, updateClusterTenants, type ClusterTenants } from './cluster-tenants.js';
import { NODE_NAME_PATTERN } from './node-name.js';
import { servingNodes } from './node-registry.js';
import type { TenantMove } from './tenant-moves.js';

/**
 * The operator's side of a tenant move (tenant-moves.ts has the states):
 * asking for one, giving one up, waiting for one. The nodes do the work,
 * each from its watch on the cluster's tenants; this side only writes the
 * request and reads how it goes, so the command may die at any moment.
 */

const refused = (message: string) => new ToolcellError(ToolErrorType.TENANT_MOVE_REFUSED, message);

function placedNode(doc: ClusterTenants, tenant: string): string {
  if (doc.tenants.tenants[tenant] === undefined) throw new ToolcellError(ToolErrorType.TENANT_NOT_FOUND, `no tenant ${JSON.stringify(tenant)} in the cluster`);
  const from = doc.placement[tenant];
  if (from === undefined) throw refused(`tenant ${tenant} is not placed on any node (it is served wherever its sessions arrive): nothing to move`);
  return from;
}

/**
 * Records the move of `tenant` to node `to` (refused: an unknown tenant, a
 * node not serving, the node it is on, while it moves elsewhere). When a
 * move of it to that same node is already recorded, that one is returned:
 * running the command again resumes the wait.
 */
export async function requestTenantMove(etcd: Etcd3, input: { tenant: string; to: string; drainSeconds: number }): Promise<TenantMove> {
  const { tenant, to } = input;
  if (!NODE_NAME_PATTERN.test(to))
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, `--node ${JSON.stringify(to)} must be a node name (letters, digits and dashes)`);
  const nodes = await servingNodes(etcd);
  let move: TenantMove | undefined;
  await updateClusterTenants(etcd, (doc) => {
    const from = placedNode(doc, tenant);
    const running = doc.moves[tenant];
    if (running !== undefined) {
      if (running.to !== to)
        throw refused(`tenant ${tenant} is being moved to node ${running.to} (phase ${running.phase}): wait for it, or give it up with --abort`);
      move = running;
      return;
    }
    if (from === to) throw refused(`tenant ${tenant} is on node ${to} already`);
    if (!nodes.has(to))
      throw new ToolcellError(
        ToolErrorType.NODE_NOT_SERVING,
        `no node ${to} is serving in this cluster (serving: ${[...nodes.keys()].sort().join(', ') || 'none'})`,
      );
    move = {
      id: randomBytes(12).toString('hex'),
      from,
      to,
      since: new Date().toISOString(),
      drainSeconds: input.drainSeconds,
      phase: 'draining',
    };
    doc.moves[tenant] = move;
  });
  return move!;
}

/** Gives up the move of `tenant` while it has not been re-pinned: it stays where it was. Refused when there is none, or later. */
export async function abortTenantMove(etcd: Etcd3, tenant: string): Promise<TenantMove> {
  let aborted: TenantMove | undefined;
  await updateClusterTenants(etcd, (doc) => {
    placedNode(doc, tenant);
    const move = doc.moves[tenant];
    if (move === undefined) throw refused(`tenant ${tenant} is not being moved`);
    if (move.phase !== 'draining' && move.phase !== 'copying')
      throw refused(`tenant ${tenant} is re-pinned on node ${move.to} already (phase ${move.phase}): the move can only finish; move it back afterwards`);
    delete doc.moves[tenant];
    aborted = move;
  });
  return aborted!;
}

/**
 * Waits until the move `id` of `tenant` is over: resolves with the node the
 * tenant is on. `onProgress` hears each phase (and problem) once. Throws
 * `tenant_move_failed` when `timeoutMs` passes (the move stays recorded and
 * the nodes go on), and `tenant_move_refused` when the move was given up.
 */
export async function waitForTenantMove(
  etcd: Etcd3,
  input: { tenant: string; id: string; timeoutMs: number; onProgress?: (move: TenantMove) => void },
): Promise<string> {
  const deadline = Date.now() + input.timeoutMs;
  let said = '';
  for (;;) {
    const { doc } = await readClusterTenants(etcd);
    const move = doc.moves[input.tenant];
    if (move === undefined || move.id !== input.id) {
      const node = doc.placement[input.tenant];
      if (node === undefined) throw new ToolcellError(ToolErrorType.TENANT_NOT_FOUND, `tenant ${input.tenant} is gone from the cluster`);
      // No record and not on the new node: someone gave the move up.
      return node;
    }
    const now = `${move.phase}:${move.problem ?? ''}`;
    if (now !== said) {
      said = now;
      input.onProgress?.(move);
    }
    if (Date.now() > deadline)
      throw new ToolcellError(
        ToolErrorType.TENANT_MOVE_FAILED,
        `tenant ${input.tenant}'s move to node ${move.to} is still at ${move.phase}${move.problem ? ` (${move.problem})` : ''} after ${Math.round(input.timeoutMs / 1000)} s; ` +
          'it goes on as its nodes can: run the command again to keep waiting, or give it up with --abort (before it is re-pinned)',
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
