import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createEngineClient, engineUnavailableError } from '../../backends/docker/engine.js';
import { removeLeftovers } from '../../backends/docker/leftovers.js';
import { awaitEngine } from '../../backends/docker/probe.js';
import { sessionMemory } from '../../backends/docker/session-memory.js';
import { parseOptions } from '../../contracts/parse-options.js';
import { errorMessage, isToolcellError, ToolErrorType } from '../../errors.js';
import { RuntimeCatalog } from '../../backends/docker/runtimes.js';
import type { AroundToolCall } from '../../mcp/server/create-tool-server.js';
import { serveHttp, SessionRefusal, type Admission, type HttpRefusal, type LiveHttpSession, type RunningHttpServer } from '../../mcp/server/serve-http.js';
import { requestIds } from '../../mcp/server/running-requests.js';
import type { ServeSession } from '../../mcp/server/session.js';
import { shellSessionIdOf } from '../../runtime/mcp-session-sandbox.js';
import { ShellService } from '../../shell/shell-service.js';
import type { WorkspaceInfo } from '../../tools/define-tool.js';
import { inCallerTerms } from '../../fs/workspace-paths.js';
import { requestAuthenticator } from '../auth/authenticate-request.js';
import { toolCallEvent, toolErrorResult } from '../operations/call-record.js';
import { FairGate } from '../admission/fair-gate.js';
import { quotaRefusal } from '../admission/quota-refusal.js';
import { ServerCpuLedger, type ServerCpuUsage } from '../admission/server-cpu.js';
import { BodyBudget } from '../http/body-budget.js';
import { OpenResponses } from '../http/open-responses.js';
import type { HostingEvent, SessionCloseReason } from '../operations/hosting-events.js';
import type { TenantLimits } from '../admission/limits.js';
import { sameIdentity, type Principal } from '../auth/principal.js';
import type { EgressEvent } from '../../egress/egress-event.js';
import type { LogVolume } from '../../telemetry/log-line.js';
import { TenantPolicies } from '../tenants/tenant-policy.js';
import { TenantSecretOpener } from '../tenants/tenant-secrets.js';
import { readTenantImage, withTenantImage, type TenantImage } from '../tenants/tenant-image.js';
import { SecretRedactor } from '../../secrets/secret-redactor.js';
import { hostingShellOptions } from '../tenants/hosting-shell-options.js';
import { needsOwnShell, openTenantShell, type TenantNetwork } from '../tenants/tenant-network.js';
import { TenantResources } from '../tenants/tenant-resources.js';
import { folderWorkspace, type PrepareWorkspace } from '../tenants/tenant-workspace.js';
import { TenantUsage } from '../admission/tenant-usage.js';
import { createTenantSessionsHandler, isTenantSessionsPath, TENANT_SESSIONS_PATH, type TenantSessionInfo } from '../http/tenant-sessions.js';
import { requestPath } from '../http/request-handler.js';
import { hostingServerOptionsSchema, type HostingServerOptions, type ResolvedHostingServerOptions } from './hosting-server-options.js';

export type { HostingServerOptions } from './hosting-server-options.js';

/** A live MCP session of a hosting server, for the admin API. */
export interface HostedSession {
  id: string;
  tenant: string;
  subject: string;
  /** The kind of credential that opened it: `subject` is a key id (`api_key`) or a token's `sub` (`oidc`). */
  via: Principal['via'];
  ageMs: number;
  calls: number;
  /** Its container's memory use now (`sessionsWithMemory` only), when the engine reported it. */
  memoryBytes?: number;
  /** The OCI runtime of the session's container (`runc`, `runsc`). */
  runtime?: string;
}

/**
 * `toolcell serve --http … --tenants FILE`: serveHttp with API keys (or any
 * Authenticator), every MCP session bound to the tenant and subject that
 * opened it, per-tenant workspaces, tools and containers, per-tenant limits,
 * server-wide caps shared in turn, and every event told to the observer.
 */
export class HostingServer {
  readonly #options: ResolvedHostingServerOptions;
  readonly #prepare: PrepareWorkspace;
  readonly #resources = new Map<string, Promise<TenantResources>>();
  readonly #usage = new TenantUsage();
  /** Each tenant's share of the server's shared threads and converters (file tools, long commands' parsing, web pages). */
  readonly #serverCpu = new ServerCpuLedger({ rateOf: (tenant) => this.#limits(tenant)?.serverCpu ?? Number.NaN });
  readonly #sessionGate: FairGate;
  readonly #callGate: FairGate;
  readonly #bodies: BodyBudget;
  readonly #openResponses = new OpenResponses();
  readonly #policies: TenantPolicies;
  readonly #secrets: TenantSecretOpener;
  readonly #onTenantRemoved = (name: string) => void this.#tenantRemoved(name);
  readonly #onKeysRevoked = (ids: string[]) => void this.#keysRevoked(ids);
  /** Sessions of each tenant being opened now (not listed yet): evictTenant waits for them too. */
  readonly #opening = new Map<string, number>();
  /** The runtime each live session's container runs on, for the admin API. */
  readonly #sessionRuntimes = new Map<string, string>();
  #runtimes!: RuntimeCatalog;
  /** What the tenants' egress proxies wrote to their event files, read as they came (the log-volume metric). */
  readonly #egressVolume: LogVolume = { lines: 0, bytes: 0, counted: 0 };
  #http!: RunningHttpServer<Principal>;
  #draining = false;
  /**
   * One shell thread and Docker backend for every tenant: each session passes
   * its tenant's container limits. A thread (a V8 isolate) per tenant cost
   * ~50 MB each and starved the event loop when many tenants opened at once.
   */
  #shell!: ShellService;

  static async start(raw: HostingServerOptions): Promise<HostingServer> {
    const server = new HostingServer(parseOptions(hostingServerOptionsSchema, raw, 'HostingServer.start'));
    try {
      await server.#start();
    } catch (error) {
      await server.#shell?.close().catch(() => {});
      throw error;
    }
    return server;
  }

  private constructor(options: ResolvedHostingServerOptions) {
    this.#options = options;
    this.#prepare =
      options.prepareWorkspace ??
      folderWorkspace({ dataDir: options.dataDir, workspaceOf: (tenant) => options.store.tenant(tenant)?.workspace, onLog: (message) => this.#log(message) });
    this.#sessionGate = new FairGate(options.maxSessions);
    this.#callGate = new FairGate(options.maxConcurrentCalls);
    this.#bodies = new BodyBudget(options.requestBodies);
    this.#policies = new TenantPolicies(options.runtime.policy, (tenant) => this.#serverCpu.budgetFor(tenant));
    this.#secrets = new TenantSecretOpener(options.dataDir);
  }

  get url(): string {
    return this.#http.url;
  }

  get port(): number {
    return this.#http.port;
  }

  /** True from the moment `close` began (the drain): /readyz says not ready from then on. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Tool calls running now, all tenants together (for metrics). */
  get runningCalls(): number {
    return this.#callGate.held;
  }

  /** Tool calls waiting for a server-wide slot (for metrics). */
  get queuedCalls(): number {
    return this.#callGate.waiting;
  }

  /** Calls waiting for their tenant's share of the server's shared threads now (for metrics). */
  get serverCpuWaiting(): number {
    return this.#serverCpu.waiting;
  }

  /** What each tenant has had of the server's shared threads (for metrics). */
  serverCpuUsage(): ServerCpuUsage[] {
    return this.#serverCpu.usage();
  }

  /** Request-body bytes held now, all tenants together (for metrics; never more than `requestBodies.serverBytes`). */
  get bufferedBodyBytes(): number {
    return this.#bodies.bufferedBytes;
  }

  /** Request-body bytes one tenant holds now (never more than `requestBodies.tenantBytes`). */
  bufferedBodyBytesOf(tenant: string): number {
    return this.#bodies.heldBy({ tenant, source: '' });
  }

  /** Lines and bytes the tenants' egress logs have written, and connections counted in their count records (for metrics). */
  get egressLogVolume(): LogVolume {
    return { ...this.#egressVolume };
  }

  /** New sessions waiting for a server-wide slot (for metrics). */
  get queuedSessions(): number {
    return this.#sessionGate.waiting;
  }

  /** Live sessions, oldest first (the admin API lists these). */
  listSessions(): HostedSession[] {
    return this.#http.listSessions().map((session) => {
      const runtime = this.#sessionRuntimes.get(session.id);
      return { ...hosted(session), ...(runtime !== undefined ? { runtime } : {}) };
    });
  }

  /**
   * Live sessions with each container's memory use now, as the engine
   * reports it (the admin API's list): a call to the engine per container,
   * so not for every request. A session whose container is not running yet
   * (it starts with the first command) has none.
   */
  async sessionsWithMemory(): Promise<HostedSession[]> {
    const sessions = this.listSessions();
    const memory = await sessionMemory(
      createEngineClient(),
      sessions.map((session) => shellSessionIdOf(session.id)),
    ).catch(() => new Map<string, number>());
    return sessions.map((session) => {
      const bytes = memory.get(shellSessionIdOf(session.id));
      return bytes === undefined ? session : { ...session, memoryBytes: bytes };
    });
  }

  /** Closes one session: its calls are cancelled and its container removed. */
  closeSession(id: string, reason: SessionCloseReason): Promise<boolean> {
    return this.#http.closeSession(id, reason);
  }

  /**
   * Stops accepting, lets running calls finish for up to `drainMs`, cancels
   * the rest, closes every session and removes every container.
   */
  async close(options: { drainMs?: number } = {}): Promise<void> {
    this.#draining = true;
    this.#options.store.off('tenant-removed', this.#onTenantRemoved);
    this.#options.store.off('keys-revoked', this.#onKeysRevoked);
    await this.#http.close(options);
    const all = await Promise.allSettled(this.#resources.values());
    this.#resources.clear();
    await Promise.all(all.map(async (settled) => (settled.status === 'fulfilled' ? settled.value.close() : undefined)));
    await this.#shell.close();
  }

  async #start(): Promise<void> {
    const options = this.#options;
    // Said now, as `exec` says it, rather than as a socket error from the first engine call below.
    const engine = await awaitEngine({ onSlow: (reason) => this.#log(reason) });
    if (!engine.available) throw engineUnavailableError(engine.reason ?? 'The Docker engine does not answer');
    if (options.removeLeftovers) {
      const result = await removeLeftovers(createEngineClient());
      if (result.containers.length > 0) this.#log(`removed ${result.containers.length} container(s) left by a server that is gone`);
      if (result.networks.length > 0) this.#log(`removed ${result.networks.length} egress network(s) and their firewall rules left by a server that is gone`);
      // The egress event files of those containers' proxies (tenant-network.ts): nothing reads them any more.
      await rm(join(options.dataDir, 'egress'), { recursive: true, force: true });
    }
    this.#runtimes = new RuntimeCatalog(createEngineClient());
    const base = hostingShellOptions(options.runtime);
    this.#shell = await ShellService.create({
      ...base,
      docker: {
        ...(base.docker as Record<string, unknown>),
        warmPool: options.warmContainers,
        // Removed above, once: the backend's own pass would find nothing more.
        removeLeftovers: false,
      },
    });
    options.store.on('tenant-removed', this.#onTenantRemoved);
    options.store.on('keys-revoked', this.#onKeysRevoked);
    const authenticated = requestAuthenticator({
      authenticators: options.authenticators,
      tenantExists: (tenant) => options.store.tenant(tenant) !== undefined,
      ...(options.observer ? { observer: options.observer } : {}),
      ...(options.challenge !== undefined ? { challenge: options.challenge } : {}),
    });
    // Every request a tenant's credentials admit takes a token of its request bucket first, whatever it asks for.
    const authenticate = async (req: IncomingMessage): Promise<Admission<Principal>> => {
      const admission = await authenticated(req);
      if ('refusal' in admission) return admission;
      const refusal = this.#takeRequestToken(admission.caller.tenant);
      return refusal ? { refusal } : admission;
    };
    const tenantSessions = createTenantSessionsHandler({
      authenticate,
      list: (tenant) => this.#http.listSessions().flatMap((session) => (session.caller?.tenant === tenant ? [tenantSessionInfo(session)] : [])),
      close: (tenant, id) =>
        this.#http.listSessions().some((session) => session.id === id && session.caller?.tenant === tenant)
          ? this.#http.closeSession(id, 'tenant')
          : Promise.resolve(false),
    });
    this.#http = await serveHttp<Principal>({
      host: options.host,
      port: options.port,
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      // A tenant's own sessions (GET /sessions, DELETE /sessions/<id>) beside /mcp, then the operator's paths.
      otherPaths: (req) => (isTenantSessionsPath(requestPath(req)) ? tenantSessions : options.otherPaths?.(req)),
      ...(options.createListener ? { createListener: options.createListener } : {}),
      ...(options.sessionIdPrefix !== undefined ? { sessionIdPrefix: options.sessionIdPrefix } : {}),
      // The fair session gate is the cap; serveHttp's own would refuse instead of queueing.
      maxSessions: Number.MAX_SAFE_INTEGER,
      sweepIntervalMs: options.sweepIntervalMs,
      onLog: (message) => this.#log(message),
      authenticate,
      // Tenant, kind of credential and name within it: a token whose `sub` is a key id is not that key.
      sameOwner: sameIdentity,
      admitMessage: (caller, body, res) => (caller ? this.#admitMessage(caller, body, res) : undefined),
      // Only after authenticate: a request without a tenant's credentials never gets a byte of its body buffered.
      readBody: (req, res, caller) =>
        this.#bodies.read(
          req,
          res,
          {
            tenant: caller?.tenant,
            source: req.socket.remoteAddress ?? 'unknown',
            // Parsing a tenant's bodies is the server's work for it, charged to its serverCpu share as its file tools are.
            budget: caller ? this.#serverCpu.budgetFor(caller.tenant) : undefined,
          },
          (limit) => this.#note({ event: 'quota_refusal', tenant: caller?.tenant ?? '', limit }),
        ),
      createSession: (id, caller) => this.#openSession(id, caller),
      // No confirm handler: nobody can be asked, so a policy ask_user is refused naming its rule.
      // Each session's own settings (its tenant's policy, workspace and secrets) come with it.
      createScheduler: (settings) => options.runtime.createScheduler(settings),
      onSessionOpen: (session) =>
        this.#note({ event: 'session_open', tenant: session.caller!.tenant, subject: session.caller!.subject, via: session.caller!.via, session: session.id }),
      onSessionClose: (session, reason) =>
        this.#note({ event: 'session_close', tenant: session.caller!.tenant, session: session.id, reason: reason as SessionCloseReason }),
    });
  }

  /** requestsPerMinute: a refusal when the tenant's request bucket is empty. */
  #takeRequestToken(tenant: string): HttpRefusal | undefined {
    const limits = this.#limits(tenant);
    if (!limits) return undefined;
    const taken = this.#usage.takeRequestToken(tenant, limits.requestsPerMinute);
    if (taken.ok) return undefined;
    this.#note({ event: 'quota_refusal', tenant, limit: 'requestsPerMinute' });
    return quotaRefusal(
      'requestsPerMinute',
      `quota_exceeded: the limit requestsPerMinute (${limits.requestsPerMinute} requests a minute, of any kind) is reached; retry after ${taken.retryAfterSeconds} s`,
      taken.retryAfterSeconds,
    );
  }

  /**
   * How many answers the tenant may have open (a body of notifications or
   * responses alone, a cancellation, is never refused: it has no answer),
   * then the request-rate limit: each tools/call in the body takes a token
   * of the tenant's bucket.
   */
  #admitMessage(caller: Principal, body: unknown, res: ServerResponse): HttpRefusal | undefined {
    const limits = this.#limits(caller.tenant);
    if (!limits) return undefined;
    if (requestIds(body).length > 0) {
      const open = this.#openResponses.admit(caller.tenant, limits.concurrentCalls, res);
      if (open) {
        this.#note({ event: 'quota_refusal', tenant: caller.tenant, limit: open.limit });
        return open.refusal;
      }
    }
    const messages = Array.isArray(body) ? body : [body];
    const calls = messages.filter((message) => (message as { method?: unknown } | null)?.method === 'tools/call').length;
    for (let i = 0; i < calls; i++) {
      const taken = this.#usage.takeCallToken(caller.tenant, limits.callsPerMinute);
      if (taken.ok) continue;
      this.#note({ event: 'quota_refusal', tenant: caller.tenant, limit: 'callsPerMinute' });
      return quotaRefusal(
        'callsPerMinute',
        `quota_exceeded: the limit callsPerMinute (${limits.callsPerMinute} calls a minute) is reached; retry after ${taken.retryAfterSeconds} s`,
        taken.retryAfterSeconds,
      );
    }
    return undefined;
  }

  async #openSession(id: string, caller: Principal | undefined): Promise<ServeSession> {
    if (!caller) throw new Error('a hosting session needs an authenticated caller');
    const { tenant } = caller;
    this.#opening.set(tenant, (this.#opening.get(tenant) ?? 0) + 1);
    try {
      return await this.#openAdmitted(id, caller);
    } finally {
      const left = (this.#opening.get(tenant) ?? 1) - 1;
      if (left > 0) this.#opening.set(tenant, left);
      else this.#opening.delete(tenant);
    }
  }

  async #openAdmitted(id: string, caller: Principal): Promise<ServeSession> {
    const { tenant } = caller;
    // A cluster node refuses while the tenant moves: no workspace may be mounted here meanwhile. No host named.
    if (this.#options.admitsTenant?.(tenant) === false)
      throw new SessionRefusal({ status: 503, message: 'The tenant is being moved; retry shortly', headers: { 'Retry-After': '5' } });
    const limits = this.#limits(tenant);
    if (!limits) throw new SessionRefusal({ status: 401, message: 'Invalid bearer token' });
    if (!this.#usage.countSessionIn(tenant, limits.sessions)) {
      this.#note({ event: 'quota_refusal', tenant, limit: 'sessions', session: id });
      throw new SessionRefusal({
        status: 403,
        message:
          `quota_exceeded: the limit sessions (${limits.sessions} at once) is reached; close a session first: ` +
          `GET ${TENANT_SESSIONS_PATH} lists this tenant's sessions and DELETE ${TENANT_SESSIONS_PATH}/<id> closes one (with this key), ` +
          `and a session whose client is gone closes by itself after ${limits.abandonedSeconds} s without a request or an open event stream`,
        type: ToolErrorType.QUOTA_EXCEEDED,
        data: { limit: 'sessions' },
      });
    }
    const undo: Array<() => Promise<void> | void> = [() => this.#usage.countSessionOut(tenant)];
    // A token only for a session that would open: one refused for `sessions` costs none.
    const opened = this.#usage.takeSessionToken(tenant, limits.sessionsPerMinute);
    if (!opened.ok) {
      this.#usage.countSessionOut(tenant);
      this.#note({ event: 'quota_refusal', tenant, limit: 'sessionsPerMinute', session: id });
      throw new SessionRefusal(
        quotaRefusal(
          'sessionsPerMinute',
          `quota_exceeded: the limit sessionsPerMinute (${limits.sessionsPerMinute} new sessions a minute) is reached; retry after ${opened.retryAfterSeconds} s`,
          opened.retryAfterSeconds,
        ),
      );
    }
    const rollback = async () => {
      while (undo.length > 0) await undo.pop()!();
    };
    try {
      const runtime = await this.#sessionRuntime(tenant);
      const releaseSlot = await this.#sessionGate.acquire(tenant, AbortSignal.timeout(this.#options.sessionWaitMs)).catch(() => {
        throw new SessionRefusal({ status: 503, message: 'The server is at its session capacity; retry later', headers: { 'Retry-After': '5' } });
      });
      undo.push(releaseSlot);
      const resources = await this.#tenantResources(tenant, limits);
      resources.use();
      undo.push(() => resources.unuse());
      const policy = await this.#policies.engineFor(tenant, this.#options.store.tenant(tenant)?.policy ?? []);
      // Opened now so that a secret that cannot be opened refuses the session, told to the operator only.
      const secrets = await this.#secrets.open(tenant, this.#options.store.tenant(tenant)?.secrets).catch((error: unknown) => {
        this.#log(`tenant ${tenant}: ${errorMessage(error)}`);
        throw new SessionRefusal({
          status: 503,
          message: "The tenant's secrets are not available on this server; its operator has been told",
          headers: { 'Retry-After': '60' },
        });
      });
      const redactor = SecretRedactor.of(secrets);
      const base = await resources.createSession(id, secrets);
      // The key may have been revoked while the container started, after the keys-revoked sweep looked.
      if (caller.keyId !== undefined && this.#options.store.findKey(caller.keyId)?.revoked !== false) {
        await base.close().catch(() => {});
        throw new SessionRefusal({ status: 401, message: 'Invalid bearer token' });
      }
      this.#sessionRuntimes.set(id, runtime);
      undo.push(() => void this.#sessionRuntimes.delete(id));
      return {
        registry: base.registry,
        // The tenant's policy (operator's rules with the tenant's over them), its workspace for saved outputs,
        // its secrets redacted from results (tenant-secrets.ts).
        scheduler: {
          policy,
          output: { saveDir: `${resources.workspace.stateDir}/tool-outputs`, workspace: resources.workspace },
          ...(redactor ? { redact: (text: string) => redactor.redact(text) } : {}),
        },
        idleMs: limits.idleSeconds * 1000,
        abandonedMs: limits.abandonedSeconds * 1000,
        maxLifetimeMs: limits.maxSessionSeconds * 1000,
        budget: this.#serverCpu.budgetFor(tenant),
        aroundCall: this.#aroundCall(tenant, id, { redactor, workspace: resources.workspace }),
        close: async () => {
          await base.close().catch(() => {});
          await rollback();
        },
      };
    } catch (error) {
      await rollback();
      if (error instanceof SessionRefusal) throw error;
      // What failed (a disk image, a folder, the engine) is the operator's to read: its message names host paths.
      this.#log(`could not open a session for tenant ${tenant}: ${errorMessage(error)}`);
      const code = isToolcellError(error) ? ` (${error.code})` : '';
      throw new SessionRefusal({ status: 500, message: `Could not open a session${code}; the server's log says why. Retry later.` });
    }
  }

  /**
   * The runtime a tenant's new session runs on: the tenant's (tenants file),
   * else the operator's, else the engine's default. One the engine does not
   * have refuses the session at once, in one line saying how to set it up.
   */
  async #sessionRuntime(tenant: string): Promise<string> {
    const named = this.#options.store.tenant(tenant)?.runtime ?? this.#options.runtime.settings.sandbox.runtime;
    try {
      return (await this.#runtimes.resolve(named, { egress: false })).name;
    } catch (error) {
      if (!isToolcellError(error)) throw error;
      this.#log(`tenant ${tenant}: ${error.message}`);
      throw new SessionRefusal({ status: 503, message: error.message, type: ToolErrorType.SANDBOX_UNAVAILABLE });
    }
  }

  /** A tenant's resources for its current limits: made on first use, replaced when its container limits change. */
  async #tenantResources(tenant: string, limits: TenantLimits): Promise<TenantResources> {
    const view = this.#options.store.tenant(tenant);
    const allow = view?.network;
    const sandboxRuntime = view?.runtime;
    const uid = view?.uid;
    if (uid === undefined) throw new SessionRefusal({ status: 401, message: 'Invalid bearer token' });
    const image = await readTenantImage(tenant, view?.dockerfile).catch((error: unknown) => {
      this.#log(errorMessage(error));
      throw new SessionRefusal({
        status: 503,
        message: "The tenant's sandbox image is not available; its operator has been told",
        headers: { 'Retry-After': '60' },
      });
    });
    const pending = this.#resources.get(tenant);
    if (pending) {
      const current = await pending.catch(() => undefined);
      // Another session may have replaced them while this one waited: start over from what is there now.
      if (this.#resources.get(tenant) !== pending) return this.#tenantResources(tenant, limits);
      if (
        current?.matches({
          tenant,
          limits,
          uid,
          network: { tenant, allow },
          ...(image ? { imageKey: image.key } : {}),
          ...(sandboxRuntime !== undefined ? { sandboxRuntime } : {}),
        })
      ) {
        return current;
      }
      if (current) void current.retire();
    }
    const made = this.#makeResources(tenant, uid, limits, allow, image, sandboxRuntime);
    this.#resources.set(tenant, made);
    made.catch(() => this.#resources.get(tenant) === made && this.#resources.delete(tenant));
    return made;
  }

  /**
   * A tenant's resources on the shared shell service, or, for a tenant with
   * an allow list, on a shell service of its own (its own egress network and
   * proxy, tenant-network.ts), closed with them.
   */
  async #makeResources(
    tenant: string,
    uid: number,
    limits: TenantLimits,
    allow: readonly string[] | undefined,
    image: TenantImage | undefined,
    sandboxRuntime: string | undefined,
  ): Promise<TenantResources> {
    const network: TenantNetwork = {
      tenant,
      allow,
      hosts: this.#options.egressHosts,
      logDir: join(this.#options.dataDir, 'egress'),
      logVolume: this.#egressVolume,
      onEvent: (name, event) => this.#note(egressEvent(name, event)),
    };
    // A tenant with its own image, like one with its own network, has a shell service (a Docker backend) of its own.
    const operator = hostingShellOptions(this.#options.runtime);
    const own =
      needsOwnShell(network) || image
        ? await openTenantShell({
            operator: image ? withTenantImage(operator, tenant, image) : operator,
            network,
            warmContainers: this.#options.warmContainers,
          })
        : undefined;
    return TenantResources.create({
      tenant,
      uid,
      limits,
      budget: this.#serverCpu.budgetFor(tenant),
      runtime: this.#options.runtime,
      prepareWorkspace: this.#prepare,
      network,
      ...(image ? { imageKey: image.key } : {}),
      ...(sandboxRuntime !== undefined ? { sandboxRuntime } : {}),
      shell: own?.shell ?? this.#shell,
      ...(own ? { ownsShell: true, egress: own.egress } : {}),
    });
  }

  /**
   * Per call: the tenant's concurrentCalls limit (refused at once, as a
   * tool error), then a server-wide slot in the tenant's turn, then the
   * call; its event is recorded before the result goes back.
   */
  #aroundCall(tenant: string, session: string, context: { redactor: SecretRedactor | undefined; workspace: WorkspaceInfo }): AroundToolCall {
    const { redactor, workspace } = context;
    return async (call, run) => {
      const started = Date.now();
      const limits = this.#limits(tenant);
      let result: CallToolResult;
      let done: Awaited<ReturnType<typeof run>> | undefined;
      if (limits && !this.#usage.startCall(tenant, limits.concurrentCalls)) {
        this.#note({ event: 'quota_refusal', tenant, limit: 'concurrentCalls', session });
        result = toolErrorResult(
          ToolErrorType.QUOTA_EXCEEDED,
          `quota_exceeded: the limit concurrentCalls (${limits.concurrentCalls} at once) is reached; wait for a running call to finish`,
        );
      } else {
        try {
          const release = await this.#callGate.acquire(tenant, call.signal);
          try {
            done = await run();
            // The tools answer in the tenant's terms already; any message that named its workspace's host path still gets /workspace.
            result = inTenantTerms(done.result, workspace);
          } finally {
            release();
          }
        } catch (error) {
          if (!call.signal.aborted) throw error;
          result = toolErrorResult(ToolErrorType.CANCELLED, 'The call was cancelled while it waited for a slot.');
        } finally {
          this.#usage.endCall(tenant);
        }
      }
      await this.#record(
        toolCallEvent({
          tenant,
          session,
          callId: call.callId,
          tool: call.tool,
          // A model that learnt a secret elsewhere must not write it into the audit log either.
          args: redactor ? redactor.redactValue(call.args) : call.args,
          durationMs: Date.now() - started,
          result,
          ...(done ? { run: done } : {}),
        }),
      );
      return result;
    };
  }

  /**
   * Ends a tenant's sessions on this server and lets go of its workspace (a
   * cluster moving or removing it): running calls get up to `drainMs` to
   * finish, then every session of the tenant closes (`reason`), and its
   * resources close (containers, egress network, workspace unmounted).
   * New sessions must be refused meanwhile (`admitsTenant`); sessions that
   * were opening when it began are waited for and closed too. When
   * `wanted()` turns false during the drain (the move was given up), it
   * returns false at once and closes nothing.
   */
  async evictTenant(name: string, options: { drainMs?: number; reason?: SessionCloseReason; wanted?: () => boolean } = {}): Promise<boolean> {
    const mine = () => this.#http.listSessions().filter((session) => session.caller?.tenant === name);
    const wanted = options.wanted ?? (() => true);
    const deadline = Date.now() + (options.drainMs ?? 0);
    // inactiveMs is 0 while a request of the session runs (a call streaming its result).
    while (Date.now() < deadline && mine().some((session) => session.inactiveMs === 0)) {
      if (!wanted()) return false;
      await sleep(100);
    }
    if (!wanted()) return false;
    for (;;) {
      await Promise.all(mine().map((session) => this.#http.closeSession(session.id, options.reason ?? 'tenant_moved')));
      const resources = this.#resources.get(name);
      this.#resources.delete(name);
      await (await resources?.catch(() => undefined))?.retire();
      if (mine().length === 0 && !this.#resources.has(name) && !this.#opening.has(name)) break;
      await sleep(100);
    }
    this.#forgetTenant(name);
    return true;
  }

  async #tenantRemoved(name: string): Promise<void> {
    const sessions = this.#http.listSessions().filter((session) => session.caller?.tenant === name);
    await Promise.all(sessions.map((session) => this.#http.closeSession(session.id, 'tenant_removed')));
    const resources = this.#resources.get(name);
    this.#resources.delete(name);
    await (await resources?.catch(() => undefined))?.retire();
    this.#forgetTenant(name);
  }

  /** What the server counts for a tenant that left this server (removed, or moved to another node). */
  #forgetTenant(name: string): void {
    this.#usage.forget(name);
    this.#serverCpu.forget(name);
    this.#policies.forget(name);
  }

  /** A revoked key ends what it opened: nobody can reach those sessions any more, and they hold containers. */
  async #keysRevoked(ids: string[]): Promise<void> {
    const revoked = new Set(ids);
    const sessions = this.#http.listSessions().filter((session) => session.caller?.keyId !== undefined && revoked.has(session.caller.keyId));
    await Promise.all(sessions.map((session) => this.#http.closeSession(session.id, 'key_revoked')));
  }

  #limits(tenant: string): TenantLimits | undefined {
    return this.#options.store.tenant(tenant)?.limits;
  }

  async #record(event: HostingEvent): Promise<void> {
    await this.#options.observer?.record(event);
  }

  /** Records an event nothing waits for; an observer's failure is logged, never thrown into a request. */
  #note(event: HostingEvent): void {
    this.#record(event).catch((error: unknown) => this.#log(`recording a ${event.event} event failed: ${errorMessage(error)}`));
  }

  #log(message: string): void {
    this.#options.onLog?.(message);
  }
}

/** A result with every text block in the tenant's terms (inCallerTerms: its workspace is /workspace). */
function inTenantTerms(result: CallToolResult, workspace: WorkspaceInfo): CallToolResult {
  return { ...result, content: result.content.map((block) => (block.type === 'text' ? { ...block, text: inCallerTerms(workspace, block.text) } : block)) };
}

/** An egress proxy's event as the audit log writes it: the tenant's name, no time of its own (the log adds one). */
function egressEvent(tenant: string, event: EgressEvent): HostingEvent {
  const { time: _time, ...fields } = event;
  return { event: 'egress', tenant, ...fields };
}

function tenantSessionInfo(session: LiveHttpSession<Principal>): TenantSessionInfo {
  const { id, ageMs, inactiveMs, streamOpen, calls } = session;
  return { id, subject: session.caller?.subject ?? '', ageMs, inactiveMs, streamOpen, calls };
}

function hosted(session: LiveHttpSession<Principal>): HostedSession {
  const caller = session.caller!;
  return { id: session.id, tenant: caller.tenant, subject: caller.subject, via: caller.via, ageMs: session.ageMs, calls: session.calls };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
