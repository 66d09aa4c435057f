import { randomUUID } from 'node:crypto';
import type { WorkBudget } from '../../contracts/work-budget.js';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EgressEvent } from '../../egress/egress-event.js';
import type { EgressWording } from '../../egress/egress-wording.js';
import type { LogVolume } from '../../telemetry/log-line.js';
import { ShellService, type ShellServiceOptions } from '../../shell/shell-service.js';
import { EgressLogTail } from './egress-log-tail.js';
import type { Tool } from '../../tools/tool.js';
import { WebFetchTool } from '../../tools/web/web-fetch-tool.js';

/**
 * What a hosting tenant's sandboxes may reach. The tenants file alone
 * decides (`network`, else `defaults.network`, else none): the operator's
 * own `sandbox.network` is never handed to tenants. A tenant with an allow
 * list gets a shell service of its own whose Docker backend has
 * `egress`: its own internal network and its own proxy, which allows only
 * that list, so no other tenant's (or the operator's) container shares the
 * network and every connection is told to `onEvent` with the tenant's name.
 * A tenant without one gets containers with no network at all.
 */
export interface TenantNetwork {
  tenant: string;
  /** The allow list; undefined: no network. */
  allow?: readonly string[] | undefined;
  /** Names the proxy resolves from this map instead of DNS (tests; an operator pinning names). */
  hosts?: Readonly<Record<string, string | readonly string[]>> | undefined;
  /** Every connection the tenant's proxy allowed or refused. */
  onEvent?: ((tenant: string, event: EgressEvent) => void) | undefined;
  /**
   * Where the proxy's event file goes (`openTenantEgress`): the proxy runs in
   * the shell service's thread, so its events reach this thread as lines of a
   * file, read as they are appended. Default: the OS temp folder.
   */
  logDir?: string | undefined;
  /** Added to as the proxy's event file is read: the egress log's volume, for its metric. */
  logVolume?: LogVolume | undefined;
}

/**
 * Refusals as a tenant reads them: its list is not a setting of its own but
 * kept by the server's operator (`toolcell tenant set NAME --network-allow`),
 * so they say so instead of naming the operator's `sandbox.network.allow`.
 */
export const TENANT_WORDING: Readonly<EgressWording> = Object.freeze({
  list: "this tenant's network allow list (kept by the server's operator)",
  none: "This tenant's sandboxes have no network: the server's operator decides which hosts a tenant may reach.",
});

/** True when the tenant needs a shell service of its own (its own egress network and proxy). */
export function needsOwnShell(network: TenantNetwork): boolean {
  return network.allow !== undefined;
}

/** Part of the key that says when a tenant's shell service must be made again: its allow list. */
export function networkKey(allow: readonly string[] | undefined): string {
  return allow === undefined ? 'none' : JSON.stringify(allow);
}

/**
 * The shell service options for a tenant: the operator's (image, limits,
 * …) without the operator's `egress`, plus the tenant's own when it has an
 * allow list (its events: openTenantEgress).
 */
export function tenantShellOptions(operator: ShellServiceOptions, network: TenantNetwork): ShellServiceOptions {
  const base = withoutOperatorEgress(operator);
  // No onEvent here: the options cross into the shell service's thread, where a function cannot go (openTenantEgress).
  const { allow, hosts } = network;
  return {
    ...base,
    docker: {
      ...base.docker,
      ...(allow !== undefined ? { egress: { allow: [...allow], wording: { list: TENANT_WORDING.list }, ...(hosts ? { hosts } : {}) } } : {}),
    },
  };
}

/** The operator's shell service options without its `sandbox.network` egress: what no tenant inherits. */
export function withoutOperatorEgress(operator: ShellServiceOptions): ShellServiceOptions {
  const { egress: _operatorEgress, ...docker } = { ...(operator.docker as Record<string, unknown> | undefined) };
  return { ...operator, docker };
}

/**
 * `web_fetch` held to the tenant's allow list (it fetches on the host, so the
 * operator's list must not apply); its connections, allowed and refused, are
 * told to `onEvent` with the tenant's name, as its proxy's are.
 */
export function tenantWebFetch(network: TenantNetwork, budget?: WorkBudget): Tool<unknown> {
  const { onEvent } = network;
  return new WebFetchTool({
    allow: network.allow ?? [],
    owner: network.tenant,
    ...(budget ? { budget } : {}),
    wording: TENANT_WORDING,
    ...(network.hosts ? { hosts: network.hosts } : {}),
    ...(onEvent ? { onEgress: (event) => onEvent(network.tenant, event) } : {}),
  }) as Tool<unknown>;
}

/** A tenant's shell service options, and what must be closed after the service is. */
export interface TenantEgress {
  options: ShellServiceOptions;
  /** After the shell service closed: reads the last events and removes the event file. */
  close(): Promise<void>;
}

/**
 * The shell service options for a tenant (tenantShellOptions), with its
 * proxy's events delivered: the Docker backend runs in the shell service's
 * worker thread, where a callback cannot go, so the proxy appends its
 * events to a file of this service's own and this thread reads them as
 * they come and hands each to `onEvent` with the tenant's name.
 */
export async function openTenantEgress(operator: ShellServiceOptions, network: TenantNetwork): Promise<TenantEgress> {
  const { onEvent, logVolume, ...rest } = network;
  if (network.allow === undefined || !onEvent) return { options: tenantShellOptions(operator, rest), close: async () => {} };
  const dir = network.logDir ?? join(tmpdir(), 'toolcell-egress');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${network.tenant}-${randomUUID()}.jsonl`);
  const tail = EgressLogTail.start(file, (event) => onEvent(network.tenant, event), logVolume);
  const options = tenantShellOptions(operator, rest);
  (options.docker as { egress: { logFile?: string } }).egress.logFile = file;
  return {
    options,
    close: async () => {
      await tail.close();
      await rm(file, { force: true });
    },
  };
}

/** A shell service made for one tenant (its own egress network and proxy), and its egress to close after it. */
export interface TenantShell {
  shell: ShellService;
  egress: TenantEgress;
}

/**
 * The shell service of a tenant with an allow list: a Docker backend of its
 * own, so its egress network and proxy are the tenant's alone. Container
 * limits still come with each session, as on the shared service.
 */
export async function openTenantShell(input: { operator: ShellServiceOptions; network: TenantNetwork; warmContainers: number }): Promise<TenantShell> {
  const egress = await openTenantEgress(input.operator, input.network);
  try {
    const shell = await ShellService.create({
      ...egress.options,
      docker: {
        ...(egress.options.docker as Record<string, unknown>),
        warmPool: input.warmContainers,
        // The hosting server removed leftovers once at start; a second pass per tenant adds nothing.
        removeLeftovers: false,
      },
    });
    return { shell, egress };
  } catch (error) {
    await egress.close().catch(() => {});
    throw error;
  }
}
