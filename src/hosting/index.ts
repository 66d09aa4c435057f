/**
 * Hosting as a library: `createHostingServer` hosts the tenants of a tenants
 * file over MCP Streamable HTTP, each with its API keys, workspace,
 * containers and limits, as `toolcell serve --http … --tenants FILE` does
 * (the CLI parses its flags and calls it). The folder's only door for
 * programs; its subfolders are: tenants/ (the tenants file and store, each
 * tenant's workspace, disk, network, image, policy and secrets), admission/
 * (limits, fair gates, rate buckets), auth/ (API keys, OIDC), server/ (the
 * hosting server), http/ (the listener, request bodies, a tenant's /sessions),
 * operations/ (events and the wiring of audit/, metrics/, health/ and admin/).
 */
export { createHostingServer, createHostingServerOptionsSchema, type CreateHostingServerOptions, type HostedTenants } from './create-hosting-server.js';
export { HostingServer, type HostedSession, type HostingServerOptions } from './server/hosting-server.js';
export { TenantStore, type TenantView } from './tenants/tenant-store.js';
export { DEFAULT_TENANT_LIMITS, type TenantLimits, type LimitsInput } from './admission/limits.js';
export type { HostingEvent, HostingObserver } from './operations/hosting-events.js';
export type { Authenticator, Principal } from './auth/principal.js';
