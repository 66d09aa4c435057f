import type { ServeHttpOptions } from '../../mcp/server/serve-http.js';
import { z } from 'zod';
import type { Runtime } from '../../runtime/runtime.js';
import { bodyBudgetOptionsSchema } from '../http/body-budget.js';
import type { HostingObserver } from '../operations/hosting-events.js';
import type { Authenticator } from '../auth/principal.js';
import type { TenantStore } from '../tenants/tenant-store.js';
import type { PrepareWorkspace } from '../tenants/tenant-workspace.js';

const fn = <T>() => z.custom<T>((value) => typeof value === 'function', { error: 'must be a function' });
const object = <T>() => z.custom<T>((value) => typeof value === 'object' && value !== null, { error: 'must be an object' });

/** The options of HostingServer.start, their bounds and defaults. */
export const hostingServerOptionsSchema = z.object({
  store: object<TenantStore>(),
  /** The operator's runtime: its worker pool runs the tenants' file tools, its policy and approval mode apply to every call. */
  runtime: object<Runtime>(),
  /** Tried in order; the first that recognises a bearer value decides. */
  authenticators: z.array(object<Authenticator>()).min(1),
  observer: object<HostingObserver>().optional(),
  /** Where tenants' default workspaces live (`<data-dir>/tenants/<name>/workspace`). */
  dataDir: z.string().refine((path) => path.startsWith('/'), { error: 'must be an absolute path' }),
  /** Makes a tenant's workspace ready (a disk cap plugs in here); default: a folder under dataDir. */
  prepareWorkspace: fn<PrepareWorkspace>().optional(),
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535),
  allowedHosts: z.array(z.string()).optional(),
  /** Sessions open at once, all tenants together; past it a new session waits its tenant's turn. Default 64. */
  maxSessions: z.number().int().min(1).default(64),
  /** Tool calls running at once, all tenants together; past it calls wait their tenant's turn. Default 16. */
  maxConcurrentCalls: z.number().int().min(1).default(16),
  /** How long a new session waits for a server-wide slot before a 503. Default 30 s. */
  sessionWaitMs: z.number().int().min(0).default(30_000),
  /** Pre-started containers per tenant workspace and limits (the most recently used four keep theirs). Default 0: an idle tenant costs nothing. */
  warmContainers: z.number().int().min(0).max(8).default(0),
  /** Remove sandbox containers of dead toolcell processes before serving. Default true. */
  removeLeftovers: z.boolean().default(true),
  /** How often idle and expired sessions are looked for. Default 1000 ms. */
  sweepIntervalMs: z.number().int().min(10).default(1000),
  /** The `WWW-Authenticate` challenge of a 401 (an OIDC authenticator adds `resource_metadata`). */
  challenge: z.string().optional(),
  /** Handlers for paths beside /mcp: health, the OAuth protected-resource document, the admin API (serveHttp's `otherPaths`). */
  otherPaths: fn<NonNullable<ServeHttpOptions['otherPaths']>>().optional(),
  /** Put before every session id (a cluster node's `<node>.`: the front routes on it); default none (serveHttp's `sessionIdPrefix`). */
  sessionIdPrefix: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,62}\.$/, { error: 'must be a node name and a dot' })
    .optional(),
  /**
   * Whether a tenant's new sessions may open now (a cluster node: not while
   * the tenant is being moved, cluster/tenant-moves.ts); false answers 503
   * with Retry-After. Default: always.
   */
  admitsTenant: fn<(tenant: string) => boolean>().optional(),
  /** The listening server: TLS and the timeouts of `createHostingHttpServer` (serveHttp's `createListener`). */
  createListener: fn<NonNullable<ServeHttpOptions['createListener']>>().optional(),
  /**
   * How request bodies are read (body-budget.ts): at most 4 MiB each, 16 MiB
   * held per tenant and 64 MiB server-wide (past them 503 with Retry-After),
   * each within 30 s (408).
   */
  requestBodies: bodyBudgetOptionsSchema.prefault({}),
  /** Names the tenants' egress proxies resolve from this map instead of DNS (tests; an operator pinning names). */
  egressHosts: z.record(z.string().min(1), z.union([z.string().min(1), z.array(z.string().min(1))])).optional(),
  onLog: fn<(message: string) => void>().optional(),
});

export type HostingServerOptions = z.input<typeof hostingServerOptionsSchema>;

export type ResolvedHostingServerOptions = z.output<typeof hostingServerOptionsSchema>;
