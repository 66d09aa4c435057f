import { generateApiKey, loadCluster, type EtcdConnectionOptions, type TenantsFile } from '../../hosting/index.js';
import { escapeText } from '../../ui/escape-text.js';
import { applyTenantFields, UsageError } from './tenant-fields.js';

/**
 * `toolcell tenant add|revoke|list --etcd …`: the same changes as on a
 * tenants file, made to the cluster's tenants in etcd (hosting/cluster/
 * cluster-tenants.ts) with a compare-and-swap, which every node's server
 * applies from its watch.
 */

/** Options a cluster cannot take yet: they name files on one machine, which the other nodes do not have. */
const LOCAL_ONLY = [
  ['workspace', '--workspace'],
  ['policy', '--policy'],
  ['dataDir', '--data-dir'],
] as const;

export async function addClusterTenant(connection: EtcdConnectionOptions, name: string, options: Record<string, unknown>): Promise<void> {
  const { chooseNode, connectEtcd, NODE_NAME_PATTERN, servingNodes, updateClusterTenants } = await loadCluster();
  for (const [attribute, flag] of LOCAL_ONLY)
    if (options[attribute] !== undefined)
      throw new UsageError(`${flag} names a path on one machine: not with --etcd (a tenant's workspace is on its node, under the server's data folder)`);
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
    const doc = await updateClusterTenants(etcd, (doc) => {
      const existing = doc.tenants.tenants[name];
      created = existing === undefined;
      const { entry } = applyTenantFields(existing ?? { keys: [] }, options);
      entry.keys.push({ id: key.id, hash: key.hash, createdAt: new Date().toISOString() });
      doc.tenants.tenants[name] = entry;
      const placed = doc.placement[name];
      if (placed !== undefined && typeof wanted === 'string' && wanted !== placed)
        throw new UsageError(`tenant ${name} lives on node ${placed}: moving it (tenant move) is not there yet`);
      node = placed ?? (typeof wanted === 'string' ? wanted : chooseNode(nodes, doc));
      doc.placement[name] = node;
    });
    process.stdout.write(`${key.key}\n`);
    process.stderr.write(
      `${escapeText(`toolcell tenant: ${created ? 'created tenant' : 'added key'} ${name} (key id ${key.id}, uid ${doc.tenants.tenants[name]!.uid}) on node ${node} of the cluster`)}\n`,
    );
  } finally {
    etcd.close();
  }
}

export async function revokeClusterKeys(connection: EtcdConnectionOptions, name: string, keyId: string | undefined): Promise<void> {
  const { connectEtcd, updateClusterTenants } = await loadCluster();
  const etcd = connectEtcd(connection);
  try {
    let revoked: string[] = [];
    await updateClusterTenants(etcd, (doc) => {
      const entry = doc.tenants.tenants[name];
      if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in the cluster`);
      const targets = entry.keys.filter((key) => keyId === undefined || key.id === keyId);
      if (targets.length === 0) throw new UsageError(`tenant ${name} has no key ${JSON.stringify(keyId)}`);
      const now = new Date().toISOString();
      for (const key of targets) key.revokedAt ??= now;
      revoked = targets.map((key) => key.id);
    });
    process.stderr.write(`${escapeText(`toolcell tenant: revoked ${revoked.join(', ')} of ${name} in the cluster`)}\n`);
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
