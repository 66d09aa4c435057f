/**
 * Hosting as a library: `createHostingServer` hosts the tenants of a tenants
 * file over MCP Streamable HTTP, each with its API keys, workspace,
 * containers and limits, as `toolcell serve --http … --tenants FILE` does
 * (the CLI parses its flags and calls it). The folder's only door, for
 * programs and for the CLI alike (.dependency-cruiser.cjs refuses an import
 * of a file inside from outside); its subfolders are: tenants/ (the tenants
 * file and store, each tenant's workspace, disk, network, image, policy and
 * secrets), admission/ (limits, fair gates, rate buckets), auth/ (API keys,
 * OIDC), server/ (the hosting server), http/ (the listener, request bodies,
 * a tenant's /sessions), operations/ (events and the wiring of audit/,
 * metrics/, health/ and admin/), admin/ (the operator's API and its client).
 *
 * The door is light: what the `toolcell tenant` and `hosting` commands use
 * (the tenants file, limits, keys, the admin client) loads with it, while
 * the server itself (the runtime, MCP, Docker: some 330 modules) is loaded
 * by the first `createHostingServer` call, so every `toolcell` command
 * still starts without it. Hence the server's classes are exported as types.
 */
import type { CreateHostingServerOptions, HostedTenants } from './create-hosting-server.js';

export type { CreateHostingServerOptions, HostedTenants };

/** Starts a hosting server (see create-hosting-server.ts); its code is loaded on the first call. */
export async function createHostingServer(options: CreateHostingServerOptions): Promise<HostedTenants> {
  const { createHostingServer: create } = await import('./create-hosting-server.js');
  return create(options);
}

export type { HostingServer, HostedSession, HostingServerOptions } from './server/hosting-server.js';
export { TenantStore, type TenantView } from './tenants/tenant-store.js';
export type { HostingEvent, HostingObserver } from './operations/hosting-events.js';
export type { Authenticator, Principal } from './auth/principal.js';

// The tenants file and what `toolcell tenant` derives from an entry.
export {
  emptyTenantsFile,
  readTenantsFile,
  tenantSchema,
  TENANT_NAME,
  TENANT_NAME_RULE,
  writeTenantsFile,
  type TenantEntry,
  type TenantsFile,
} from './tenants/tenants-file.js';
export { resolveTenantNetwork, tenantNetworkSchema } from './tenants/tenant-policy-fields.js';
export { resolveTenantRuntime } from './tenants/tenant-runtime.js';
export { workspaceOverlap } from './tenants/workspace-overlap.js';
export {
  DEFAULT_TENANT_LIMITS,
  limitsSchema,
  namedLimits,
  parseLimitAssignment,
  resolveLimits,
  type LimitsInput,
  type TenantLimits,
} from './admission/limits.js';
export { generateApiKey } from './auth/api-key.js';

// What `toolcell serve --tenants` checks and reports before and around createHostingServer.
export { audienceProblem, parsePublicUrl, type PublicUrl } from './auth/oidc/resource-identifiers.js';
export { TlsPairFailure, type HostingOperationsFlagValues } from './operations/hosting-operations.js';
export { isListenError, ListenerFailure } from './operations/listener-failure.js';

// The operator's admin API, as `toolcell hosting sessions|close` use it.
export { readAdminKeyFile } from './admin/admin-key.js';
export { closeAdminSession, listAdminSessions } from './admin/admin-client.js';
export type { AdminSessionInfo } from './admin/admin-handler.js';

// One node of a cluster on Docker Swarm (cluster/: tenants and placement in etcd). etcd's client
// (gRPC) is heavy, so the cluster's code loads on first use, like the server's.
export type { ClusterMembership, ClusterSession, ClusterTenants, EtcdConnectionOptions, JoinClusterOptions, NodeRecord, TenantMove } from './cluster/index.js';

/** The cluster's functions (cluster/index.ts), loaded on the first call. */
export function loadCluster(): Promise<typeof import('./cluster/index.js')> {
  return import('./cluster/index.js');
}
