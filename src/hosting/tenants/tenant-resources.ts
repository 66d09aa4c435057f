import { join } from 'node:path';
import type { SessionSandbox } from '../../runtime/mcp-session-factory.js';
import { createSessionFactory } from '../../runtime/mcp-session-factory.js';
import type { ServeSessionFactory } from '../../mcp/server/session.js';
import { shellSessionSandbox } from '../../runtime/mcp-session-sandbox.js';
import { ToolRegistry } from '../../registry/tool-registry.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { ShellService } from '../../shell/shell-service.js';
import type { Tool } from '../../tools/tool.js';
import type { WorkspaceInfo } from '../../tools/define-tool.js';
import { tenantSlug } from './disk/tenant-slug.js';
import type { TenantLimits } from '../admission/limits.js';
import type { WorkBudget } from '../../contracts/work-budget.js';
import { limitsKey, type SessionLimits } from '../../backends/session-limits.js';
import { networkKey, tenantWebFetch, type TenantEgress, type TenantNetwork } from './tenant-network.js';
import type { PrepareWorkspace, PreparedWorkspace } from './tenant-workspace.js';
import { tenantUser } from './tenant-uid.js';

/**
 * What a tenant's sessions and file tools are made with, as one key: its
 * sessions' container limits, its time limits, network, image and runtime.
 * A change needs new resources.
 */
function resourcesKey(options: Pick<TenantResourcesOptions, 'tenant' | 'limits' | 'uid' | 'imageKey' | 'sandboxRuntime' | 'network'>): string {
  return limitsKey({
    session: tenantSessionLimits(options.tenant, options.limits, tenantUser(options.uid), options.sandboxRuntime),
    commandTimeoutSeconds: options.limits.commandTimeoutSeconds,
    fileToolTimeoutSeconds: options.limits.fileToolTimeoutSeconds,
    network: networkKey(options.network?.allow),
    image: options.imageKey ?? 'toolcell',
  });
}

/**
 * The container limits of a tenant's sessions: its memory, CPUs and pids;
 * one CPU group per tenant (however many sessions it runs, a busy tenant gets
 * one share of the CPU under contention, and at most its `totalCpus`); its own uid (tenants never share
 * the kernel's per-user budgets, tenant-uid.ts); its runtime.
 */
function tenantSessionLimits(tenant: string, limits: TenantLimits, user: { uid: number; gid: number } | undefined, runtime: string | undefined): SessionLimits {
  return {
    memory: limits.memory,
    cpus: limits.cpus,
    pids: limits.pids,
    cpuGroup: tenantSlug(tenant),
    cpuGroupCpus: limits.totalCpus,
    ...(user ? { user } : {}),
    ...(runtime !== undefined ? { runtime } : {}),
  };
}

export interface TenantResourcesOptions {
  tenant: string;
  /** The tenant's own uid (tenant-uid.ts): its commands run as it, its workspace belongs to it. */
  uid: number;
  limits: TenantLimits;
  runtime: Runtime;
  /** What its file tools' CPU in the shared worker threads is charged to (the tenant's `serverCpu` share). */
  budget?: WorkBudget;
  prepareWorkspace: PrepareWorkspace;
  /**
   * The shell service the tenant's sessions open their containers on: the
   * server's shared one (each session passes the tenant's container limits),
   * or one made for this tenant alone (a backend of its own, e.g. its own
   * egress network), which `ownsShell` hands over to be closed with these resources.
   */
  shell: ShellService;
  /** Close `shell` when these resources close. Default false (a shared service outlives every tenant). */
  ownsShell?: boolean;
  /** The owned shell's egress (tenant-network.ts): closed after the shell, so its last events are read. */
  egress?: TenantEgress;
  /** What its sandboxes and web_fetch may reach (tenant-network.ts); absent: nothing. */
  network?: TenantNetwork;
  /** The key of the tenant's own image (tenant-image.ts), when it has one: a changed image needs new resources. */
  imageKey?: string;
  /** The OCI runtime of its sandboxes (tenant-runtime.ts); absent: the shell service's (the operator's). */
  sandboxRuntime?: string;
}

/**
 * Whom a tenant's commands run as: the owner its workspace was prepared
 * for; as root, the tenant's uid even when a preparer of the embedder's said
 * nothing (never the workspace folder's owner, which may be root, shared
 * by every tenant); not root, the folder's owner (no uid of its own).
 */
function commandUser(prepared: PreparedWorkspace, uid: number): { uid: number; gid: number } | undefined {
  if (prepared.owner !== undefined) return prepared.owner;
  return process.geteuid?.() === 0 ? tenantUser(uid) : undefined;
}

/**
 * What one tenant's sessions share: its workspace, file tools confined to
 * it (run in the runtime's worker pool), and the session factory that opens
 * each session's own container, with the tenant's memory, CPU and pids
 * limits, on the shell service it was handed. Counted: it is closed when
 * retired (the tenant was removed or its limits changed) and unused; the
 * sessions opened under old limits keep them.
 */
export class TenantResources {
  readonly tenant: string;
  readonly limits: TenantLimits;
  /** The OCI runtime its sessions' containers get; undefined: the operator's. */
  readonly sandboxRuntime: string | undefined;
  readonly key: string;
  readonly workspace: WorkspaceInfo;
  /** Opens a session's registry and sandbox; `secrets` are its commands' (the tenant's, opened by the server). */
  readonly createSession: (sessionId: string, secrets?: Readonly<Record<string, string>>) => ReturnType<ServeSessionFactory>;
  readonly #shell: ShellService | undefined;
  readonly #egress: TenantEgress | undefined;
  readonly #prepared: PreparedWorkspace;
  #users = 0;
  #openingSecrets: Readonly<Record<string, string>> | undefined;
  #retired = false;
  #closed: Promise<void> | undefined;

  static async create(options: TenantResourcesOptions): Promise<TenantResources> {
    const prepared = await options.prepareWorkspace(options.tenant, options.limits, tenantUser(options.uid));
    const user = commandUser(prepared, options.uid);
    // A tenant knows its workspace as its sandbox shows it, /workspace: no host path in what its tools answer.
    const workspace: WorkspaceInfo = {
      roots: [prepared.path],
      stateDir: join(prepared.path, '.toolcell'),
      hideHostPaths: true,
      ...(user ? { owner: user } : {}),
    };
    try {
      // The worker threads are every tenant's: each gets its fair share of them and of their CPU, and its calls its own time limit.
      const tools = await options.runtime.pool.createTools({
        workspace,
        owner: options.tenant,
        callTimeoutMs: options.limits.fileToolTimeoutSeconds * 1000,
        ...(options.budget ? { budget: options.budget } : {}),
      });
      return new TenantResources(options, workspace, prepared, tools, user);
    } catch (error) {
      if (options.ownsShell) await options.shell.close().catch(() => {});
      await options.egress?.close().catch(() => {});
      await prepared.release().catch(() => {});
      throw error;
    }
  }

  private constructor(
    options: TenantResourcesOptions,
    workspace: WorkspaceInfo,
    prepared: PreparedWorkspace,
    fileTools: Tool<unknown>[],
    user: { uid: number; gid: number } | undefined,
  ) {
    this.tenant = options.tenant;
    this.limits = options.limits;
    this.sandboxRuntime = options.sandboxRuntime;
    this.key = resourcesKey(options);
    this.workspace = workspace;
    this.#shell = options.ownsShell ? options.shell : undefined;
    this.#egress = options.egress;
    this.#prepared = prepared;
    // Only tools bound to this tenant: its file tools, the stateless web_fetch, and (per session) its shell.
    // The runtime's discovered and MCP tools belong to the operator's workspace and are not served.
    const baseRegistry = new ToolRegistry({ onWarning: () => {} });
    for (const tool of fileTools) baseRegistry.register(tool);
    // web_fetch fetches on the host: held to the tenant's own list, never the operator's.
    if (options.runtime.registry.get('web_fetch')) baseRegistry.register(tenantWebFetch(options.network ?? { tenant: options.tenant }, options.budget));
    const openSandbox: (sessionId: string) => Promise<SessionSandbox> = shellSessionSandbox({
      service: options.shell,
      sandbox: 'docker',
      workspace,
      baseRegistry,
      limits: tenantSessionLimits(options.tenant, options.limits, user, options.sandboxRuntime),
      // The MCP handshake does not wait for the container: a burst of new sessions would hold each
      // initialize for every container start before it; the session's first command waits instead.
      awaitSandbox: false,
      secrets: () => this.#openingSecrets,
      wallTimeoutMs: options.limits.commandTimeoutSeconds * 1000,
      ...(options.runtime.settings.shell.inactivityTimeoutMs !== undefined ? { inactivityTimeoutMs: options.runtime.settings.shell.inactivityTimeoutMs } : {}),
    });
    const factory = createSessionFactory({ baseRegistry, openSandbox });
    this.createSession = async (sessionId, secrets) => {
      // Read by openSandbox, synchronously, when the factory starts: no other session's opening comes between.
      this.#openingSecrets = secrets;
      try {
        return await factory(sessionId);
      } finally {
        this.#openingSecrets = undefined;
      }
    };
  }

  /** True when new sessions should use fresh resources for these limits, allow list, uid, image and runtime. */
  matches(options: Pick<TenantResourcesOptions, 'tenant' | 'limits' | 'uid' | 'imageKey' | 'sandboxRuntime' | 'network'>): boolean {
    return !this.#retired && this.key === resourcesKey(options);
  }

  use(): void {
    this.#users++;
  }

  /** One user fewer; a retired, unused tenant's resources close. */
  async unuse(): Promise<void> {
    this.#users--;
    if (this.#retired && this.#users === 0) await this.close();
  }

  /** No new sessions; closes once the last user is gone. */
  async retire(): Promise<void> {
    this.#retired = true;
    if (this.#users === 0) await this.close();
  }

  /** Releases the workspace, and ends the tenant's own shell service if it was handed one (its sessions each close their container). */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#shell?.close().catch(() => {});
      await this.#egress?.close().catch(() => {});
      await this.#prepared.release().catch(() => {});
    })();
    return this.#closed;
  }
}
