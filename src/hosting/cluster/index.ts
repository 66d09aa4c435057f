/**
 * One toolcell service across many machines (deploy/swarm/DESIGN.md): the
 * cluster's shared state in etcd (tenants with their keys' hashes and
 * placement, the nodes serving), a node joining it, and what `toolcell
 * tenant … --etcd` changes. Nothing here names Docker or Swarm: a node is a
 * name, an address, a tenants file and an etcd.
 */
export { connectEtcd, etcdConnectionSchema, type EtcdConnectionOptions } from './etcd-connection.js';
export { readClusterTenants, updateClusterTenants, CLUSTER_TENANTS_KEY, type ClusterTenants } from './cluster-tenants.js';
export { servingNodes, chooseNode, type NodeRecord } from './node-registry.js';
export { joinCluster, type ClusterMembership, type JoinClusterOptions } from './join-cluster.js';
export { NODE_NAME_PATTERN, nodeNameSchema } from './node-name.js';
export { requestTenantMove, abortTenantMove, waitForTenantMove } from './tenant-move-request.js';
export { tenantOnHold, MOVE_PHASES, type TenantMove, type TenantRemoval, type MovePhase } from './tenant-moves.js';
export { clusterSessions, type ClusterSession } from './session-summary.js';
export { waitForTenantsApplied, type TenantsAppliedState } from './tenants-applied.js';
