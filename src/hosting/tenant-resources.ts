import { join } from 'node:path';
import type { SessionSandbox } from '../mcp/server/session-factory.js';
import { createSessionFactory } from '../mcp/server/session-factory.js';
import type { ServeSessionFactory } from '../mcp/server/session.js';
import { shellSessionSandbox } from '../mcp/server/shell-sandbox.js';
import { ToolRegistry } from '../registry/tool-registry.js';
import type { Runtime } from '../runtime/runtime.js';
import { shellServiceOptions } from '../runtime/shell-settings.js';
import { ShellService } from '../shell/shell-service.js';
import type { Tool } from '../tools/tool.js';
import type { WorkspaceInfo } from '../tools/define-tool.js';
import type { TenantLimits } from './limits.js';
import { networkKey, openTenantEgress, tenantWebFetch, type TenantEgress, type TenantNetwork } from './tenant-network.js';
import type { PrepareWorkspace, PreparedWorkspace } from './tenant-workspace.js';

/** What the container limits and network of a tenant are made of: a change needs a new shell service. */
function containerKey(limits: TenantLimits, allow: readonly string[] | undefined): string {
  return [limits.memoryBytes, limits.cpus, limits.pids, limits.commandTimeoutSeconds, networkKey(allow)].join('/');
}

export interface TenantResourcesOptions {
  tenant: string;
  limits: TenantLimits;
  runtime: Runtime;
  prepareWorkspace: PrepareWorkspace;
  /** Pre-started containers kept for the tenant's next session. */
  warmContainers: number;
  /** What its sandboxes may reach (tenant-network.ts); absent: no network. */
  network?: TenantNetwork;
}

/**
 * What one tenant's sessions share: its workspace, file tools confined to
 * it (run in the runtime's worker pool), and a shell service whose Docker
 * backend gives every container the tenant's memory, CPU and pids limits.
 * Each session gets its own container from it. Counted: it is closed when
 * retired (the tenant was removed or its limits changed) and unused.
 */
export class TenantResources {
  readonly tenant: string;
  readonly limits: TenantLimits;
  readonly key: string;
  readonly workspace: WorkspaceInfo;
  readonly createSession: ServeSessionFactory;
  readonly #shell: ShellService;
  readonly #prepared: PreparedWorkspace;
  readonly #egress: TenantEgress;
  #users = 0;
  #retired = false;
  #closed: Promise<void> | undefined;

  static async create(options: TenantResourcesOptions): Promise<TenantResources> {
    const prepared = await options.prepareWorkspace(options.tenant, options.limits);
    const workspace: WorkspaceInfo = { roots: [prepared.path], stateDir: join(prepared.path, '.toolcell') };
    let shell: ShellService | undefined;
    let egress: TenantEgress | undefined;
    try {
      // Never the operator's sandbox.network: the tenants file alone decides (tenant-network.ts).
      egress = await openTenantEgress(shellServiceOptions(options.runtime.settings), options.network ?? { tenant: options.tenant });
      const base = egress.options;
      const docker = { ...(base.docker as Record<string, unknown>) };
      shell = await ShellService.create({
        ...base,
        docker: {
          ...docker,
          limits: { memoryBytes: options.limits.memoryBytes, cpus: options.limits.cpus, pids: options.limits.pids },
          warmPool: options.warmContainers,
          // The hosting server removed leftovers once at start; a second pass per tenant adds nothing.
          removeLeftovers: false,
        },
      });
      const tools = await options.runtime.pool.createTools({ workspace });
      return new TenantResources(options, workspace, prepared, shell, tools, egress);
    } catch (error) {
      await shell?.close().catch(() => {});
      await egress?.close().catch(() => {});
      await prepared.release().catch(() => {});
      throw error;
    }
  }

  private constructor(
    options: TenantResourcesOptions,
    workspace: WorkspaceInfo,
    prepared: PreparedWorkspace,
    shell: ShellService,
    fileTools: Tool<unknown>[],
    egress: TenantEgress,
  ) {
    this.#egress = egress;
    this.tenant = options.tenant;
    this.limits = options.limits;
    this.key = containerKey(options.limits, options.network?.allow);
    this.workspace = workspace;
    this.#shell = shell;
    this.#prepared = prepared;
    // Only tools bound to this tenant: its file tools, the stateless web_fetch, and (per session) its shell.
    // The runtime's discovered and MCP tools belong to the operator's workspace and are not served.
    const baseRegistry = new ToolRegistry({ onWarning: () => {} });
    for (const tool of fileTools) baseRegistry.register(tool);
    if (options.runtime.registry.get('web_fetch')) baseRegistry.register(tenantWebFetch(options.network ?? { tenant: options.tenant }));
    const openSandbox: (sessionId: string) => Promise<SessionSandbox> = shellSessionSandbox({
      service: shell,
      sandbox: 'docker',
      workspace,
      baseRegistry,
      wallTimeoutMs: options.limits.commandTimeoutSeconds * 1000,
      ...(options.runtime.settings.shell.inactivityTimeoutMs !== undefined ? { inactivityTimeoutMs: options.runtime.settings.shell.inactivityTimeoutMs } : {}),
    });
    this.createSession = createSessionFactory({ baseRegistry, openSandbox });
  }

  /** True when new sessions should use fresh resources for these limits and allow list. */
  matches(limits: TenantLimits, allow?: readonly string[]): boolean {
    return !this.#retired && this.key === containerKey(limits, allow);
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

  /** Removes the tenant's containers and ends its shell service. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#shell.close().catch(() => {});
      await this.#egress.close().catch(() => {});
      await this.#prepared.release().catch(() => {});
    })();
    return this.#closed;
  }
}
