import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { Etcd3 } from 'etcd3';
import { generateApiKey, loadCluster, type EtcdConnectionOptions, type TenantMove, type TenantsFile } from '../../hosting/index.js';
import { escapeText } from '../../ui/escape-text.js';
import { applyTenantFields, UsageError } from './tenant-fields.js';

/**
 * `toolcell tenant add|set|revoke|remove|list|move --etcd …`: the same changes as on a
 * tenants file, made to the cluster's tenants in etcd (hosting/cluster/
 * cluster-tenants.ts) with a compare-and-swap, which every node's server
 * applies from its watch. add, set, revoke and remove then wait (up to
 * --wait-seconds) until every serving node enforces the change, and say
 * which do (hosting/cluster/tenants-applied.ts): a new key opens a session
 * on any node once the command returns, a revoked one is refused on all.
 */

/** How long add, set, revoke and remove wait for the nodes by default. */
const DEFAULT_WAIT_SECONDS = 30;

/** The command's --wait-seconds, or the default. */
function waitSecondsOf(options: Record<string, unknown>): number {
  return typeof options.waitSeconds === 'number' ? options.waitSeconds : DEFAULT_WAIT_SECONDS;
}

/**
 * Waits for the serving nodes to enforce `revision` and says where they
 * stand. The change is made whatever they do: a node behind takes it from
 * its watch when it can, so this reports rather than fails.
 */
async function reportEnforced(etcd: Etcd3, revision: string, waitSeconds: number): Promise<void> {
  const { waitForTenantsApplied } = await loadCluster();
  const state = await waitForTenantsApplied(etcd, { revision, timeoutMs: waitSeconds * 1000 });
  const nodes = (names: string[]) => `node${names.length === 1 ? '' : 's'} ${names.join(', ')}`;
  const lines: string[] = [];
  if (state.applied.length > 0) lines.push(`in effect on ${nodes(state.applied)}`);
  if (state.pending.length > 0)
    lines.push(`not yet in effect on ${nodes(state.pending)} after ${waitSeconds} s: each takes it from etcd as soon as it can (the change is made)`);
  if (state.silent.length > 0)
    lines.push(
      `${nodes(state.silent)} ${state.silent.length === 1 ? 'does' : 'do'} not say what it enforces (an older toolcell): it takes the change from its watch`,
    );
  if (lines.length === 0) lines.push('no node is serving: each takes the change when it starts');
  for (const line of lines) process.stderr.write(`${escapeText(`toolcell tenant: ${line}`)}\n`);
}

/** Options a cluster cannot take yet: they name files on one machine, which the other nodes do not have. */
const LOCAL_ONLY = [
  ['workspace', '--workspace'],
  ['policy', '--policy'],
  ['dataDir', '--data-dir'],
] as const;

export async function addClusterTenant(connection: EtcdConnectionOptions, name: string, options: Record<string, unknown>): Promise<void> {
  const { chooseNode, connectEtcd, NODE_NAME_PATTERN, servingNodes, updateClusterTenants } = await loadCluster();
  refuseLocalOnly(options);
  const wanted = options.node;
  if (wanted !== undefined && (typeof wanted !== 'string' || !NODE_NAME_PATTERN.test(wanted)))
    throw new UsageError(`--node ${JSON.stringify(wanted)} must be a node name (letters, digits and dashes)`);
  const etcd = connectEtcd(connection);
  try {
    const key = generateApiKey();
    let created = false;
    let node = '';
    const nodes = await servingNodes(etcd);
    if (typeof wanted === 'string' && !nodes.has(wanted))
      throw new UsageError(`no node ${wanted} is serving in this cluster (serving: ${[...nodes.keys()].sort().join(', ') || 'none'})`);
    const { doc, revision } = await updateClusterTenants(etcd, (doc) => {
      const existing = doc.tenants.tenants[name];
      const removal = doc.removals[name];
      if (existing === undefined && removal !== undefined)
        throw new UsageError(
          `tenant ${name} was removed and node ${removal.node} has not deleted its workspace yet: add it again once it has (that node must be serving)`,
        );
      created = existing === undefined;
      const { entry } = applyTenantFields(existing ?? { keys: [] }, options);
      entry.keys.push({ id: key.id, hash: key.hash, createdAt: new Date().toISOString() });
      doc.tenants.tenants[name] = entry;
      const placed = doc.placement[name];
      if (placed !== undefined && typeof wanted === 'string' && wanted !== placed)
        throw new UsageError(`tenant ${name} lives on node ${placed}: move it with toolcell tenant move ${name} --node ${wanted}`);
      node = placed ?? (typeof wanted === 'string' ? wanted : chooseNode(nodes, doc));
      doc.placement[name] = node;
    });
    // At once: a command stopped while it waits must not lose the key it made (KEY=$(…) gets it at the exit anyway).
    process.stdout.write(`${key.key}\n`);
    process.stderr.write(
      `${escapeText(`toolcell tenant: ${created ? 'created tenant' : 'added key'} ${name} (key id ${key.id}, uid ${doc.tenants.tenants[name]!.uid}) on node ${node} of the cluster`)}\n`,
    );
    await reportEnforced(etcd, revision, waitSecondsOf(options));
  } finally {
    etcd.close();
  }
}

export async function revokeClusterKeys(connection: EtcdConnectionOptions, name: string, options: Record<string, unknown> & { key?: string }): Promise<void> {
  const keyId = options.key;
  const { connectEtcd, updateClusterTenants } = await loadCluster();
  const etcd = connectEtcd(connection);
  try {
    let revoked: string[] = [];
    const { revision } = await updateClusterTenants(etcd, (doc) => {
      const entry = doc.tenants.tenants[name];
      if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in the cluster`);
      const targets = entry.keys.filter((key) => keyId === undefined || key.id === keyId);
      if (targets.length === 0) throw new UsageError(`tenant ${name} has no key ${JSON.stringify(keyId)}`);
      const now = new Date().toISOString();
      for (const key of targets) key.revokedAt ??= now;
      revoked = targets.map((key) => key.id);
    });
    process.stderr.write(`${escapeText(`toolcell tenant: revoked ${revoked.join(', ')} of ${name} in the cluster`)}\n`);
    await reportEnforced(etcd, revision, waitSecondsOf(options));
  } finally {
    etcd.close();
  }
}

export async function readClusterTenantsOnce(connection: EtcdConnectionOptions): Promise<{ content: TenantsFile; placement: Record<string, string> }> {
  const { connectEtcd, readClusterTenants } = await loadCluster();
  const etcd = connectEtcd(connection);
  try {
    const { doc } = await readClusterTenants(etcd);
    return { content: doc.tenants, placement: doc.placement };
  } finally {
    etcd.close();
  }
}

/** Refused with --etcd: flags naming files on one machine. */
function refuseLocalOnly(options: Record<string, unknown>): void {
  for (const [attribute, flag] of LOCAL_ONLY)
    if (options[attribute] !== undefined)
      throw new UsageError(`${flag} names a path on one machine: not with --etcd (a tenant's workspace is on its node, under the server's data folder)`);
}

/** `tenant set NAME --etcd …`: the fields given, changed in one compare-and-swap; every node's server applies them as on one host. */
export async function setClusterTenant(connection: EtcdConnectionOptions, name: string, options: Record<string, unknown>): Promise<void> {
  refuseLocalOnly(options);
  const { connectEtcd, updateClusterTenants } = await loadCluster();
  const etcd = connectEtcd(connection);
  try {
    let changed: string[] = [];
    const { revision } = await updateClusterTenants(etcd, (doc) => {
      const existing = doc.tenants.tenants[name];
      if (!existing) throw new UsageError(`no tenant ${JSON.stringify(name)} in the cluster (toolcell tenant add creates one)`);
      const applied = applyTenantFields(existing, options);
      changed = applied.changed;
      if (changed.length === 0) throw new UsageError('nothing to change: give --limit, --network-allow or --runtime');
      doc.tenants.tenants[name] = applied.entry;
    });
    process.stderr.write(`${escapeText(`toolcell tenant: changed ${name} (${changed.join(', ')}) in the cluster`)}\n`);
    await reportEnforced(etcd, revision, waitSecondsOf(options));
  } finally {
    etcd.close();
  }
}

/**
 * `tenant remove NAME --etcd …`: the tenant and its keys go in one
 * compare-and-swap (every node closes its sessions, as on one host), and
 * its node is asked to delete its workspace (a removal record, which that
 * node clears once done). Refused while the tenant is being moved.
 */
export async function removeClusterTenant(connection: EtcdConnectionOptions, name: string, options: Record<string, unknown>): Promise<void> {
  const { connectEtcd, updateClusterTenants } = await loadCluster();
  const etcd = connectEtcd(connection);
  try {
    let node: string | undefined;
    const { revision } = await updateClusterTenants(etcd, (doc) => {
      if (!doc.tenants.tenants[name]) throw new UsageError(`no tenant ${JSON.stringify(name)} in the cluster`);
      const move = doc.moves[name];
      if (move !== undefined)
        throw new UsageError(
          `tenant ${name} is being moved to node ${move.to} (phase ${move.phase}): wait for the move, or give it up (tenant move ${name} --abort), then remove it`,
        );
      node = doc.placement[name];
      delete doc.tenants.tenants[name];
      delete doc.placement[name];
      if (node !== undefined) doc.removals[name] = { node, since: new Date().toISOString() };
    });
    process.stderr.write(
      `${escapeText(`toolcell tenant: removed ${name} from the cluster${node !== undefined ? `; node ${node} closes its sessions and deletes its workspace` : ''}`)}\n`,
    );
    await reportEnforced(etcd, revision, waitSecondsOf(options));
  } finally {
    etcd.close();
  }
}

/** `tenant move NAME --node N --etcd …` (and `--abort`): see hosting/cluster/tenant-moves.ts for the states. */
export async function moveClusterTenant(
  connection: EtcdConnectionOptions,
  name: string,
  options: { node?: string; abort?: boolean; drainSeconds: number; waitSeconds: number },
): Promise<void> {
  const { abortTenantMove, connectEtcd, requestTenantMove, waitForTenantMove } = await loadCluster();
  const say = (text: string) => process.stderr.write(`${escapeText(`toolcell tenant: ${text}`)}\n`);
  const etcd = connectEtcd(connection);
  try {
    if (options.abort) {
      if (options.node !== undefined) throw new UsageError('--abort takes no --node: it gives up the move recorded for the tenant');
      const aborted = await abortTenantMove(etcd, name);
      say(`gave up moving ${name} to node ${aborted.to}: it stays on node ${aborted.from}, its workspace there untouched`);
      process.stdout.write(`${aborted.from}\n`);
      return;
    }
    if (options.node === undefined) throw new UsageError('give --node NODE (where the tenant goes), or --abort');
    const move = await requestTenantMove(etcd, { tenant: name, to: options.node, drainSeconds: options.drainSeconds });
    say(`moving ${name} from node ${move.from} to node ${move.to} (move ${move.id}, since ${move.since})`);
    const node = await waitForTenantMove(etcd, {
      tenant: name,
      id: move.id,
      timeoutMs: options.waitSeconds * 1000,
      onProgress: (now: TenantMove) => say(`${name}: ${PHASE_TEXT[now.phase]}${now.problem !== undefined ? ` (${now.problem})` : ''}`),
    });
    if (node !== move.to) throw new ToolcellError(ToolErrorType.TENANT_MOVE_REFUSED, `the move of ${name} was given up: it is on node ${node}`);
    say(`${name} is on node ${node}`);
    process.stdout.write(`${node}\n`);
  } finally {
    etcd.close();
  }
}

const PHASE_TEXT: Record<TenantMove['phase'], string> = {
  draining: 'draining its sessions on the old node',
  copying: 'copying its workspace to the new node',
  pinned: 're-pinned; putting the copy in place',
  cleaning: 'deleting the old copy',
};
