import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Etcd3 } from 'etcd3';
import type { SessionCloseReason } from '../operations/hosting-events.js';
import type { ClusterTenants } from './cluster-tenants.js';
import { publishSessions } from './session-summary.js';
import { TenantHandover } from './tenant-handover.js';
import type { NodeTls } from './workspace-transfer.js';

/** What a node's hosting server lends the cluster for its tenants. */
export interface TenantDutiesHost {
  server: {
    evictTenant(name: string, options: { drainMs?: number; reason?: SessionCloseReason; wanted?: () => boolean }): Promise<boolean>;
    listSessions(): Array<{ id: string; tenant: string; subject: string; via: 'api_key' | 'oidc'; ageMs: number; calls: number; runtime?: string }>;
  };
  /** The server's data folder (where its tenants' disk images are). */
  dataDir: string;
}

export interface TenantDuties {
  /** After each change of the cluster's tenants. */
  kick(): void;
  /** The other nodes' fetch of a moving workspace; false for anything else. */
  intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Draining: the sessions record goes at once. */
  leave(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A node's duties towards the cluster's tenants, beside serving them: its
 * steps of moves and removals (tenant-handover.ts), started now for what is
 * already recorded, and its sessions published for `toolcell hosting
 * sessions --etcd` (session-summary.ts).
 */
export async function startTenantDuties(input: {
  etcd: Etcd3;
  node: string;
  current(): ClusterTenants;
  nodeUrl(node: string): Promise<string | undefined>;
  tls: NodeTls;
  onLog(message: string): void;
  host: TenantDutiesHost;
}): Promise<TenantDuties> {
  const { host } = input;
  const handover = new TenantHandover({
    etcd: input.etcd,
    node: input.node,
    dataDir: host.dataDir,
    current: input.current,
    evict: (tenant, drainMs, reason, wanted) => host.server.evictTenant(tenant, { drainMs, reason, ...(wanted ? { wanted } : {}) }),
    nodeUrl: input.nodeUrl,
    tls: input.tls,
    onLog: input.onLog,
  });
  let sessions: { close(): Promise<void> } | undefined = await publishSessions(input.etcd, input.node, () => host.server.listSessions(), input.onLog);
  handover.kick();
  return {
    kick: () => handover.kick(),
    intercept: (req, res) => handover.intercept(req, res),
    async leave() {
      await sessions?.close();
      sessions = undefined;
    },
    async close() {
      await sessions?.close();
      sessions = undefined;
      await handover.close();
    },
  };
}
