import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { errorMessage } from '../errors.js';
import { objectWithMethods, parseOptions } from '../contracts/parse-options.js';
import { CHOSEN_WORK_THREAD_NICE } from '../contracts/defaults.js';
import { createRuntime, type RuntimeOptions } from '../runtime/runtime.js';
import { ApiKeyAuthenticator } from './auth/api-key.js';
import type { Authenticator } from './auth/principal.js';
import { nodeNameSchema } from './cluster/node-name.js';
import type { ReadinessCheck } from './health/health-handlers.js';
import { parsePublicUrl } from './auth/oidc/resource-identifiers.js';
import { openHostingOperations, type HostingOperations } from './operations/hosting-operations.js';
import { HostingServer, type HostingServerOptions } from './server/hosting-server.js';
import { TenantDisks } from './tenants/disk/tenant-disks.js';
import { TenantStore } from './tenants/tenant-store.js';
import { folderWorkspace, type PrepareWorkspace } from './tenants/tenant-workspace.js';

const absolute = z.string().refine((path) => path.startsWith('/'), { error: 'must be an absolute path' });
const optionalString = z.string().min(1).optional();

/** The file-tool threads' nice on a hosting server: that of every thread doing work a tenant chose. */
export const HOSTING_TOOL_THREAD_NICE = CHOSEN_WORK_THREAD_NICE;

/** The options of createHostingServer: what `toolcell serve --http … --tenants FILE` is made of, as one object. */
export const createHostingServerOptionsSchema = z.strictObject({
  /** The tenants file (`toolcell tenant add` writes it), watched: a change applies to new sessions. */
  tenants: z.string().min(1),
  /** Where tenants' default workspaces, egress logs and secrets' keys live; created (mode 0700) when missing. */
  dataDir: absolute,
  /** Where MCP clients connect (`/mcp`); port 0 picks a free one (`url` says which). */
  http: z.strictObject({ host: z.string().min(1).default('127.0.0.1'), port: z.number().int().min(0).max(65535) }),
  /**
   * The operator's runtime (createRuntime's options but its workspace and
   * sandbox: the workspace is `dataDir`, the sandbox Docker): settings, policy
   * files, approval mode; its worker pool runs every tenant's file tools.
   */
  runtime: z
    .custom<Omit<RuntimeOptions, 'workspace' | 'sandbox'>>((value) => typeof value === 'object' && value !== null, { error: 'must be an object' })
    .default({}),
  /** Operations beside the tenants' port, each off unless given (toolcell serve's flags of the same names): audit log, metrics, admin API, OIDC, TLS. */
  operations: z
    .strictObject({
      audit: optionalString,
      metrics: optionalString,
      admin: optionalString,
      adminKeyFile: optionalString,
      oidcIssuer: optionalString,
      audience: optionalString,
      tenantClaim: optionalString,
      tlsCert: optionalString,
      tlsKey: optionalString,
      publicUrl: optionalString,
    })
    // The listen address is not the public one behind a proxy, and a request's Host is the client's word: the operator says it.
    .refine((operations) => operations.oidcIssuer === undefined || operations.publicUrl !== undefined, {
      path: ['publicUrl'],
      error: 'must be given with oidcIssuer: the address clients use (e.g. https://tools.example)',
    })
    .default({}),
  /**
   * Cap each tenant's default workspace with a filesystem of its own
   * (`diskBytes`, a loop-mounted image: needs root). Default: when running as
   * root. Without it workspaces are plain folders.
   */
  diskCap: z.boolean().optional(),
  /** HostingServer's own options (server-wide caps, warm containers, …) beside those above. */
  server: z
    .custom<
      Partial<Omit<HostingServerOptions, 'store' | 'runtime' | 'authenticators' | 'observer' | 'dataDir' | 'host' | 'port' | 'prepareWorkspace' | 'onLog'>>
    >((value) => typeof value === 'object' && value !== null, { error: 'must be an object' })
    .default({}),
  /** One line per thing an operator should read (escape it before a terminal shows it: tenants and clients put text in it). */
  onLog: z.custom<(message: string) => void>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  /**
   * One node of a cluster (src/hosting/cluster/). Its `name` goes before
   * every session id (`<name>.<random>`: the front routes a session's
   * requests on it) and into every audit line; `intercept` sees each request
   * to the tenants' port first and returns true when it answered it (a new
   * session of a tenant placed on another node, forwarded there);
   * `readiness` is what /readyz needs besides the engine (the cluster's
   * store reachable). Default: a single host, none of this.
   */
  node: z
    .strictObject({
      name: nodeNameSchema,
      intercept: z
        .custom<(req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>>((value) => typeof value === 'function', {
          error: 'must be a function',
        })
        .optional(),
      /** Whether a tenant's new sessions may open on this node now (not while it moves); default always. */
      admits: z.custom<(tenant: string) => boolean>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
      readiness: z.custom<ReadinessCheck>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
    })
    .optional(),
  /** A tenants store already open (tests, an embedder with its own): then `tenants` is its file, and closing the server does not close it. */
  store: objectWithMethods<TenantStore>('tenant', 'tenants', 'close').optional(),
});

export type CreateHostingServerOptions = z.input<typeof createHostingServerOptionsSchema>;

/** A hosting server started by createHostingServer, with everything it opened. */
export interface HostedTenants {
  readonly server: HostingServer;
  readonly store: TenantStore;
  /** How the server checks credentials, in order (API keys, then OIDC when configured): a cluster node checks a new session's the same way before forwarding it. */
  readonly authenticators: readonly Authenticator[];
  /** The MCP endpoint clients connect to (`http://HOST:PORT/mcp`). */
  readonly url: string;
  /**
   * Stops accepting, lets running calls finish for up to `drainMs`, closes
   * every session and container, then the operations, the runtime and the
   * tenants' disks.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

/**
 * Hosts tenants over MCP Streamable HTTP without the CLI: opens the tenants
 * file, the operator's runtime, the operations asked for and the tenants'
 * disks, and starts the server. Everything opened is closed again if the
 * start fails. Errors: TypeError or RangeError naming a bad option; a
 * ToolcellError (`invalid_tenants_file`, `invalid_settings`, …); a listen
 * error of the HTTP port as Node gives it (EADDRINUSE, …).
 */
export async function createHostingServer(raw: CreateHostingServerOptions): Promise<HostedTenants> {
  const options = parseOptions(createHostingServerOptionsSchema, raw, 'createHostingServer');
  const onLog = options.onLog ?? (() => {});
  const dataDir = resolve(options.dataDir);
  const { publicUrl, ...flags } = options.operations;
  const operationFlags = {
    ...flags,
    ...(publicUrl !== undefined ? { publicUrl: parsePublicUrl(publicUrl, 'createHostingServer: options.operations.publicUrl') } : {}),
  };
  const closers: Array<() => Promise<void> | void> = [];
  const closeAll = async () => {
    while (closers.length > 0) await closers.pop()!();
  };
  try {
    const store = options.store ?? (await TenantStore.open({ file: resolve(options.tenants), onLog, dataDir }));
    if (!options.store) closers.push(() => store.close());
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const node = options.node;
    const operations: HostingOperations = await openHostingOperations(
      { ...operationFlags, ...(node ? { node: node.name } : {}), ...(node?.readiness ? { readiness: node.readiness } : {}) },
      store,
      onLog,
    );
    closers.push(() => operations.close());
    const prepareWorkspace = await tenantWorkspaces({ dataDir, store, onLog, diskCap: options.diskCap ?? process.getuid?.() === 0, closers });
    // The runtime is the operator's (policy, approval mode, worker pool); its workspace is the data dir, never a tenant's.
    // Tenants' file-tool work runs below the threads every tenant's calls go through (the operator's pool options may say otherwise).
    const pool = { threadNice: HOSTING_TOOL_THREAD_NICE, ...options.runtime.pool };
    const runtime = await createRuntime({ ...options.runtime, pool, workspace: dataDir, sandbox: 'docker', onWarning: options.runtime.onWarning ?? onLog });
    closers.push(() => runtime.close());
    const authenticators = [new ApiKeyAuthenticator(store), ...operations.authenticators];
    const server = await HostingServer.start({
      ...options.server,
      store,
      runtime,
      authenticators,
      observer: operations.observer,
      ...operations.serverOptions,
      ...(node ? { sessionIdPrefix: `${node.name}.` } : {}),
      ...(node?.admits ? { admitsTenant: node.admits } : {}),
      ...(node?.intercept ? { createListener: interceptRequests(operations.serverOptions.createListener, node.intercept, onLog) } : {}),
      prepareWorkspace,
      dataDir,
      host: options.http.host,
      port: options.http.port,
      onLog,
    });
    closers.push(() => server.close());
    await operations.attach(server);
    let closed: Promise<void> | undefined;
    return {
      server,
      store,
      authenticators,
      url: server.url,
      close: (closing = {}) =>
        (closed ??= (async () => {
          closers.pop();
          await server.close(closing);
          await closeAll();
        })()),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The listener's handler with `intercept` in front: a request it answered goes no further. */
function interceptRequests(
  createListener: HostingServerOptions['createListener'],
  intercept: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>,
  onLog: (message: string) => void,
): NonNullable<HostingServerOptions['createListener']> {
  if (createListener === undefined) throw new TypeError('createHostingServer: options.node.intercept needs the operations listener');
  return (handler) =>
    createListener((req, res) => {
      Promise.resolve()
        .then(() => intercept(req, res))
        .then(
          (answered) => {
            if (!answered) handler(req, res);
          },
          (error: unknown) => {
            onLog(`cluster: ${errorMessage(error)}`);
            if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'application/json' }).end('{"error":"bad_gateway"}');
            else res.destroy();
          },
        );
    });
}

/**
 * How a tenant's workspace is made ready: a capped filesystem of its own
 * under the data dir when `diskCap` (a tenant with a `workspace` of its own
 * keeps that folder, uncapped), else a plain folder.
 */
async function tenantWorkspaces(input: {
  dataDir: string;
  store: TenantStore;
  onLog: (message: string) => void;
  diskCap: boolean;
  closers: Array<() => Promise<void> | void>;
}): Promise<PrepareWorkspace> {
  const { dataDir, store, onLog } = input;
  const folders = folderWorkspace({ dataDir, workspaceOf: (tenant) => store.tenant(tenant)?.workspace, onLog });
  if (!input.diskCap) {
    onLog(
      process.getuid?.() === 0
        ? 'diskCap is off: tenant workspaces are plain folders without a disk cap'
        : "not running as root: tenant workspaces are plain folders without a disk cap, and every tenant's commands run as this user",
    );
    return folders;
  }
  const disks = await TenantDisks.open({ dataDir });
  input.closers.push(() => releaseDisks(disks, onLog));
  return async (tenant, limits, owner) =>
    store.tenant(tenant)?.workspace === undefined ? disks.prepare(tenant, { diskBytes: limits.diskBytes }, owner) : folders(tenant, limits, owner);
}

/** Unmounts every tenant workspace under the data dir: this server's, then any a crashed predecessor left (so the folder can be moved or removed). */
async function releaseDisks(disks: TenantDisks, onLog: (message: string) => void): Promise<void> {
  await disks.releaseAll();
  const left = await disks.releaseLeftovers();
  if (left.length > 0) onLog(`unmounted ${left.length} tenant workspace(s) a server that is gone had left mounted`);
}
