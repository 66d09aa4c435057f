import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { ToolErrorType, ToolcellError, errorMessage, isToolcellError } from '../../errors.js';
import { isLoopbackHost } from '../../mcp/server/http-guard.js';
import type { HostingServer, HostingServerOptions } from '../server/hosting-server.js';
import type { ReadinessCheck } from '../health/health-handlers.js';
import type { HostingObserver } from './hosting-events.js';
import type { PublicUrl } from '../auth/oidc/resource-identifiers.js';
import type { Authenticator } from '../auth/principal.js';
import type { TenantStore } from '../tenants/tenant-store.js';
import { ListenerFailure } from './listener-failure.js';

/** The operator's flags of `toolcell serve --tenants` beyond the tenants themselves, as commander parses them. */
export interface HostingOperationsFlagValues {
  audit?: string;
  metrics?: string;
  /** `[HOST:]PORT` of the admin API's own listener (loopback unless a host is given). */
  admin?: string;
  adminKeyFile?: string;
  oidcIssuer?: string;
  audience?: string;
  tenantClaim?: string;
  tlsCert?: string;
  tlsKey?: string;
  publicUrl?: string;
}

export interface HostingOperationsFlags extends Omit<HostingOperationsFlagValues, 'publicUrl'> {
  /**
   * `--public-url`, checked: the address clients use (the proxy's, behind
   * one). OIDC publishes `<url>/mcp` as the resource and checks `aud`
   * against it unless --audience says otherwise; TLS certificates must name
   * its host. Without it the server does not know its public name.
   */
  publicUrl?: PublicUrl;
  /** In a cluster: this node's name, in every audit line (AuditLog's `node`) and as every metric's `node` label. */
  node?: string;
  /** In a cluster: what else /readyz needs besides the engine (the shared store reachable), so the front sends no new session here without it. */
  readiness?: ReadinessCheck;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** What the server start needs from the operations, and what runs beside it. */
export interface HostingOperations {
  observer: HostingObserver;
  authenticators: Authenticator[];
  serverOptions: Pick<HostingServerOptions, 'otherPaths' | 'createListener' | 'challenge'>;
  /** Hands over the running server (the metrics' counts, the admin API's session list). */
  attach(server: HostingServer): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the audit log, metrics, health and admin endpoints, OIDC and TLS
 * from the flags. Each piece is off unless its flag is given, except the
 * health endpoints, which cost nothing.
 */
export async function openHostingOperations(flags: HostingOperationsFlags, store: TenantStore, say: (message: string) => void): Promise<HostingOperations> {
  const [audit, metrics, admin, oidc, health, http, observers, sighup, tlsReload] = await Promise.all([
    import('../audit/audit-log.js'),
    import('../metrics/serve-metrics.js').then(async (serve) => ({ ...serve, ...(await import('../metrics/hosting-metrics.js')) })),
    import('../admin/admin-handler.js').then(async (handler) => ({ ...handler, ...(await import('../admin/admin-key.js')) })),
    import('../auth/oidc/oidc-authenticator.js').then(async (authenticator) => ({
      ...authenticator,
      ...(await import('../auth/oidc/protected-resource.js')),
      ...(await import('../auth/oidc/www-authenticate.js')),
    })),
    import('../health/health-handlers.js').then(async (handlers) => ({
      ...handlers,
      ...(await import('../health/docker-readiness.js')),
    })),
    import('../http/hosting-http-server.js'),
    import('./combine-observers.js'),
    import('../audit/reopen-on-sighup.js'),
    import('../http/tls-reload.js'),
  ]);
  const { listenOperator } = await import('../http/operator-listener.js');
  const closers: Array<() => Promise<void> | void> = [];
  const parts: HostingObserver[] = [];
  let server: HostingServer | undefined;
  const stopping = (): boolean => server?.draining ?? false;
  const ready = flags.readiness ? health.allReady(health.dockerReadiness(), flags.readiness) : health.dockerReadiness();
  try {
    // Checked before anything starts: a bad address is a usage error, not a server that started without its admin API.
    const adminListen = flags.admin !== undefined ? metrics.parseListenAddress(flags.admin) : undefined;
    if (adminListen && !isLoopbackHost(adminListen.host))
      say(`the admin API listens on ${adminListen.host}, off loopback, over plain HTTP: keep that address on a network only operators reach`);
    let auditLog: Awaited<ReturnType<typeof audit.AuditLog.open>> | undefined;
    if (flags.audit !== undefined) {
      const log = await audit.AuditLog.open({
        path: flags.audit,
        ...(flags.node !== undefined ? { node: flags.node } : {}),
        onError: (error) => say(`audit log: ${errorMessage(error)}`),
      });
      auditLog = log;
      parts.push(log);
      const stopReopening = sighup.reopenOnSighup(log, (error) => say(`audit log: cannot reopen ${flags.audit}: ${String(error)}`));
      closers.push(stopReopening, () => log.close());
    }
    let hostingMetrics: InstanceType<typeof metrics.HostingMetrics> | undefined;
    if (flags.metrics !== undefined) {
      // One container per session: the live session count is the live container count.
      hostingMetrics = new metrics.HostingMetrics({
        ...(flags.node !== undefined ? { node: flags.node } : {}),
        liveSessions: () => server?.listSessions().length ?? 0,
        liveContainers: () => server?.listSessions().length ?? 0,
        queuedCalls: () => server?.queuedCalls ?? 0,
        bufferedBodyBytes: () => server?.bufferedBodyBytes ?? 0,
        serverCpu: () => server?.serverCpuUsage() ?? [],
        serverCpuWaiting: () => server?.serverCpuWaiting ?? 0,
        logVolumes: () => ({
          ...(auditLog ? { audit: auditLog.volume } : {}),
          egress: server?.egressLogVolume ?? { lines: 0, bytes: 0, counted: 0 },
        }),
      });
      parts.push(hostingMetrics);
    }
    const observer = observers.combineObservers(...parts);
    const authenticators: Authenticator[] = [];
    const paths = new Map<string, Handler>([
      ['/healthz', health.healthzHandler],
      ['/readyz', health.createReadyzHandler({ check: ready, detail: false, stopping })],
    ]);
    let challenge: string | undefined;
    if (flags.oidcIssuer !== undefined) {
      // The listen address is not the public one behind a proxy, and a request's Host is the client's word: the operator says it.
      if (flags.publicUrl === undefined) throw new TypeError('--oidc-issuer needs --public-url URL, the address clients use (e.g. https://tools.example)');
      const authenticator = new oidc.OidcAuthenticator({
        issuer: flags.oidcIssuer,
        audience: flags.audience ?? flags.publicUrl.resource,
        ...(flags.tenantClaim !== undefined ? { tenantClaim: flags.tenantClaim } : {}),
        knownTenant: (name) => store.tenant(name) !== undefined,
        onLog: say,
      });
      await authenticator.discover();
      authenticators.push(authenticator);
      const resource = oidc.protectedResourceMetadata({ resource: flags.publicUrl.resource, authorizationServers: [flags.oidcIssuer] });
      for (const path of resource.paths) paths.set(path, resource.handler);
      challenge = oidc.wwwAuthenticate({ resourceMetadata: resource.url });
    }
    let adminHandler: Handler | undefined;
    if (flags.adminKeyFile !== undefined) {
      const adminKey = await admin.readAdminKeyFile(flags.adminKeyFile);
      adminHandler = admin.createAdminHandler({
        adminKey,
        observer,
        sessions: {
          list: async (tenant) => ((await server?.sessionsWithMemory()) ?? []).filter((session) => tenant === undefined || session.tenant === tenant),
          close: (id) => server?.closeSession(id, 'admin') ?? Promise.resolve(false),
        },
      });
    }
    const tls = flags.tlsCert !== undefined && flags.tlsKey !== undefined ? { certFile: flags.tlsCert, keyFile: flags.tlsKey } : undefined;
    // A pair that cannot serve now (no pair, expired, not yet valid, another host's) stops the start, as it would be refused on SIGHUP.
    const tlsCheck = flags.publicUrl ? { hostname: flags.publicUrl.hostname } : {};
    if (tls) say(`TLS: serving ${tls.certFile} (${await checkTlsPair(() => tlsReload.readTlsPair(tls, tlsCheck), tls)})`);
    let metricsListener: Awaited<ReturnType<typeof metrics.serveMetrics>> | undefined;
    if (hostingMetrics && flags.metrics !== undefined) {
      // Opened before the server starts: a port that cannot be had stops the start, before any container or tenant is served.
      const listen = metrics.parseListenAddress(flags.metrics);
      metricsListener = await metrics
        .serveMetrics({ metrics: hostingMetrics, host: listen.host, port: listen.port, ready, stopping })
        .catch((error: unknown) => {
          throw new ListenerFailure('--metrics', flags.metrics!, error);
        });
      const served = metricsListener;
      closers.push(() => served.close());
    }
    let adminListener: Awaited<ReturnType<typeof listenOperator>> | undefined;
    if (adminHandler && adminListen) {
      // Opened before the server starts too, for the same reason.
      adminListener = await listenOperator({ handler: adminHandler, host: adminListen.host, port: adminListen.port }).catch((error: unknown) => {
        throw new ListenerFailure('--admin', flags.admin!, error);
      });
      const served = adminListener;
      closers.push(() => served.close());
    }
    return {
      observer,
      authenticators,
      serverOptions: {
        // The admin API is never among these: it has a listener of its own (attach, below).
        otherPaths: (req) => paths.get(new URL(req.url ?? '/', 'http://localhost').pathname),
        createListener: (handler) => {
          // A cluster node asks for (never requires) a client certificate: the other nodes prove themselves with theirs.
          const listener = http.createHostingHttpServer({
            handler,
            ...(tls ? { tls: { ...tls, ...(flags.node !== undefined ? { requestCert: true } : {}) } } : {}),
          });
          if (tls) {
            // SIGHUP (certbot's deploy hook, `kill -HUP`) reads the files again; a pair that cannot serve keeps the old one serving.
            const reloadable = {
              reopen: () => tlsReload.reloadTls(listener as HttpsServer, tls, tlsCheck).then((summary) => say(`TLS: reloaded ${tls.certFile} (${summary})`)),
            };
            closers.push(sighup.reopenOnSighup(reloadable, (error) => say(`TLS: keeping the certificate served so far: ${errorMessage(error)}`)));
          }
          return listener as ReturnType<NonNullable<HostingServerOptions['createListener']>>;
        },
        ...(challenge !== undefined ? { challenge } : {}),
      },
      attach(running) {
        server = running;
        if (metricsListener) say(`metrics, /healthz and /readyz for operators at ${metricsListener.url}`);
        if (adminListener) say(`admin API (${admin.ADMIN_PATH_PREFIX}) for operators at ${adminListener.url}`);
        return Promise.resolve();
      },
      async close() {
        for (const close of closers.reverse()) await close();
      },
    };
  } catch (error) {
    for (const close of closers.reverse()) await close();
    throw error;
  }
}

/**
 * A TLS pair the server cannot serve with: bad input (invalid_input, or the
 * check's own code) that, like a listener that cannot open, stops the start
 * with exit 1 naming the flags rather than as a usage error.
 */
export class TlsPairFailure extends ToolcellError {
  constructor(message: string, cause: unknown) {
    super(isToolcellError(cause) ? cause.code : ToolErrorType.INVALID_INPUT, message, { cause });
  }
}

/**
 * Reads the pair with `read` (tls-reload's checks: a file that cannot be
 * read, is not PEM, a key that is not the certificate's, dates, names) so
 * the start stops naming the flags before anything is served; the check's
 * code is kept (invalid_input where it had none).
 */
async function checkTlsPair(read: () => Promise<{ summary: string }>, tls: { certFile: string; keyFile: string }): Promise<string> {
  try {
    return (await read()).summary;
  } catch (error) {
    // The cause's words where there is one (OpenSSL's `error:05800074:x509 certificate routines::key values mismatch`, ENOENT), else the check's.
    const cause = (error as { cause?: unknown }).cause;
    const detail = errorMessage(cause ?? error).replace(/^error:[0-9A-Fa-f]+:[^:]*:[^:]*:/, '');
    throw new TlsPairFailure(`--tls-cert ${tls.certFile} --tls-key ${tls.keyFile}: cannot serve TLS with them: ${detail}`, error);
  }
}
