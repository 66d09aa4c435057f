import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import { errorMessage, ToolcellError, ToolErrorType } from '../../errors.js';
import { ApiKeyAuthenticator } from '../auth/api-key.js';
import type { Authenticator } from '../auth/principal.js';
import type { TenantStore } from '../tenants/tenant-store.js';
import type { ReadinessCheck } from '../health/health-handlers.js';
import { CLUSTER_TENANTS_KEY } from './cluster-tenants.js';
import { connectEtcd, etcdConnectionSchema, etcdReadiness } from './etcd-connection.js';
import { forwardNewSessions } from './forward-new-session.js';
import { nodeNameSchema } from './node-name.js';
import { registerNode, servingNodes } from './node-registry.js';
import type { LeasedRecord } from './leased-record.js';
import { publishTenantsApplied } from './tenants-applied.js';
import { mirrorClusterTenants } from './tenants-mirror.js';
import { startTenantDuties, type TenantDuties, type TenantDutiesHost } from './tenant-duties.js';
import { tenantOnHold } from './tenant-moves.js';

const joinClusterSchema = z.strictObject({
  /** This node's name (session ids, audit lines, placement). */
  node: nodeNameSchema,
  /** Where the other nodes reach this node's server: `https://ADDRESS:PORT`. */
  url: z.url({ protocol: /^https$/, error: 'must be an https:// URL (nodes talk TLS to one another)' }),
  /** The node's tenants file: written from etcd, served by the hosting server. */
  tenantsFile: z.string().min(1),
  etcd: etcdConnectionSchema,
  /** TLS between the nodes: the cluster's CA, the name on every server's certificate, this server's pair. */
  serverTls: z.strictObject({ caFile: z.string().min(1), serverName: z.string().min(1), certFile: z.string().min(1), keyFile: z.string().min(1) }),
  onLog: z.custom<(message: string) => void>((value) => typeof value === 'function', { error: 'must be a function' }),
});

export type JoinClusterOptions = z.input<typeof joinClusterSchema>;

/** A node's part in a cluster, between joining and leaving. */
export interface ClusterMembership {
  /** createHostingServer's `node.intercept`: a new session of a tenant placed elsewhere goes to its node. */
  intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** createHostingServer's `node.readiness`: not ready while etcd is out of reach (etcd-connection.ts). */
  readiness: ReadinessCheck;
  /**
   * Once the server listens: the tenants store to reload on each change (and
   * the revision it then enforces published: tenants-applied.ts), and the
   * node announced as serving. With `host` (the server, its data folder
   * and authenticators), this node also does its part in moving and removing
   * tenants, publishes its sessions, and forwards OIDC sessions too (tenant-duties.ts).
   */
  serve(store: TenantStore, sessions: () => number, version: string, host?: TenantDutiesHost & { authenticators?: readonly Authenticator[] }): Promise<void>;
  /** Whether a tenant's new sessions may open here now (createHostingServer's `node.admits`): not while it moves. */
  admits(tenant: string): boolean;
  /** Stops announcing the node (placement and forwarding stop choosing it at once). */
  leave(): Promise<void>;
  /** After the server closed: the watch and the etcd client. */
  close(): Promise<void>;
}

/**
 * Joins this node's hosting server to a cluster whose shared state is in
 * etcd: the tenants file is written from the cluster's tenants before the
 * server starts and kept current by a watch (tenants-mirror.ts), new
 * sessions of tenants placed elsewhere are forwarded (forward-new-session.ts),
 * and the node is announced while it serves (node-registry.ts). Errors: a
 * bad option (TypeError naming it); `invalid_input` with the reason when
 * etcd cannot be read (unreachable, TLS refused, a bad document).
 */
export async function joinCluster(raw: JoinClusterOptions): Promise<ClusterMembership> {
  const options = parseOptions(joinClusterSchema, raw, 'joinCluster');
  const onLog = options.onLog;
  const etcd = connectEtcd(options.etcd);
  let store: TenantStore | undefined;
  let duties: TenantDuties | undefined;
  /** The newest revision of the cluster's tenants the store took (its reload after the file was written had no problem). */
  let inForce = 0n;
  let applied: LeasedRecord | undefined;
  const took = (served: TenantStore, revision: bigint) => {
    if (served.problem() !== undefined || revision <= inForce) return false;
    inForce = revision;
    return true;
  };
  try {
    const onWritten = (revision: bigint) => {
      duties?.kick();
      const served = store;
      void served?.reload().then(() => {
        if (took(served, revision)) void applied?.refresh();
      });
    };
    const mirror = await mirrorClusterTenants(etcd, options.tenantsFile, { onWritten, onLog }).catch((error: unknown) => {
      throw new ToolcellError(
        ToolErrorType.INVALID_INPUT,
        `Cannot read the cluster's tenants from etcd (${options.etcd.endpoints.join(', ')}): ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    });
    const tls = options.serverTls;
    let intercept: ((req: IncomingMessage, res: ServerResponse) => Promise<boolean>) | undefined;
    let registration: { close(): Promise<void> } | undefined;
    return {
      intercept: (req, res) => intercept?.(req, res) ?? Promise.resolve(false),
      admits: (tenant) => !tenantOnHold(mirror.current(), tenant),
      readiness: etcdReadiness(etcd, CLUSTER_TENANTS_KEY),
      async serve(served, sessions, version, host) {
        store = served;
        const nodeTls = { ca: readFileSync(tls.caFile), serverName: tls.serverName, cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) };
        const nodeUrl = async (node: string) => (await servingNodes(etcd)).get(node)?.url;
        const forward = forwardNewSessions({
          node: options.node,
          authenticators: host?.authenticators ?? [new ApiKeyAuthenticator(served)],
          placement: (tenant) => mirror.current().placement[tenant],
          nodeUrl,
          tls: nodeTls,
          onLog,
        });
        if (host) duties = await startTenantDuties({ etcd, node: options.node, current: () => mirror.current(), nodeUrl, tls: nodeTls, onLog, host });
        const own = duties;
        intercept = async (req, res) => (await own?.intercept(req, res)) || forward(req, res);
        // The store may have been opened before a change arrived: read the file once more now.
        const written = mirror.written();
        await served.reload();
        took(served, written);
        // Before the registration: a node serving always says what it enforces (only an older version says nothing).
        applied = await publishTenantsApplied(etcd, options.node, () => inForce, onLog);
        registration = await registerNode(etcd, { name: options.node, url: options.url, version }, sessions, onLog);
      },
      async leave() {
        await duties?.leave();
        await registration?.close();
        registration = undefined;
        await applied?.close();
        applied = undefined;
      },
      async close() {
        await duties?.close();
        await registration?.close();
        await applied?.close();
        await mirror.close();
        etcd.close();
      },
    };
  } catch (error) {
    etcd.close();
    throw error;
  }
}
