import type Docker from 'dockerode';
import { describeRefusal, type EgressEvent } from '../../egress/egress-event.js';
import { openEgressLog, type EgressLog } from '../../egress/egress-log.js';
import { EgressProxy } from '../../egress/egress-proxy.js';
import { mapResolver } from '../../egress/resolver.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { installFirewall, removeFirewall } from './egress-firewall.js';
import { LABELS, ownerAlive, ownerLabels } from './labels.js';

/** The Docker backend's `egress` option. */
export interface EgressSettings {
  allow: readonly string[];
  /** Names the proxy resolves from this map instead of DNS (tests; an operator pinning names). */
  hosts?: Readonly<Record<string, string | readonly string[]>>;
  /** Every connection the proxy allowed or refused. */
  onEvent?: (event: EgressEvent) => void;
  /** Also append the events to this file (created 0600), repeats per destination counted (EgressLog). */
  logFile?: string;
  /** How refusals name the list; default the settings' `sandbox.network.allow`. */
  wording?: { list: string };
}

const NETWORK_PREFIX = 'toolcell-egress-';

/**
 * One backend's way out: an internal Docker network (no route off the
 * bridge, containers cannot reach each other) whose only reachable endpoint
 * is toolcell's egress proxy, listening on the network's gateway, with host
 * firewall rules that drop everything else arriving on the bridge.
 * Containers join it instead of `none`; commands get HTTP_PROXY and
 * HTTPS_PROXY pointing at the proxy.
 */
export class EgressNetwork {
  readonly name: string;
  readonly #docker: Docker;
  readonly #bridge: string;
  readonly #proxy: EgressProxy;
  readonly #log: EgressLog | undefined;

  private constructor(docker: Docker, name: string, bridge: string, proxy: EgressProxy, log: EgressLog | undefined) {
    this.#docker = docker;
    this.#log = log;
    this.name = name;
    this.#bridge = bridge;
    this.#proxy = proxy;
  }

  static async create(input: { docker: Docker; backendId: string; settings: EgressSettings }): Promise<EgressNetwork> {
    const { docker, backendId, settings } = input;
    const name = `${NETWORK_PREFIX}${backendId}`;
    // Interface names hold at most 15 characters: `tc` + the 12-hex backend id.
    const bridge = `tc${backendId}`;
    const network = await docker.createNetwork({
      Name: name,
      Driver: 'bridge',
      Internal: true,
      EnableIPv6: false,
      CheckDuplicate: true,
      Options: {
        'com.docker.network.bridge.name': bridge,
        'com.docker.network.bridge.enable_icc': 'false',
        'com.docker.network.bridge.enable_ip_masquerade': 'false',
      },
      Labels: ownerLabels({ [LABELS.backend]: backendId }),
    });
    let proxy: EgressProxy | undefined;
    const log = settings.logFile !== undefined ? openEgressLog(settings.logFile) : undefined;
    const onEvent = (event: EgressEvent): void => {
      log?.write(event);
      settings.onEvent?.(event);
    };
    try {
      const info = (await network.inspect()) as { IPAM?: { Config?: { Gateway?: string }[] } };
      const gateway = info.IPAM?.Config?.[0]?.Gateway;
      if (!gateway) throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `The Docker engine gave the egress network ${name} no gateway address.`);
      proxy = await EgressProxy.start({
        host: gateway,
        allow: settings.allow,
        ...(settings.hosts ? { resolver: mapResolver(settings.hosts) } : {}),
        ...(settings.wording ? { wording: settings.wording } : {}),
        onEvent,
      });
      await installFirewall({ bridge, gateway, proxyPort: proxy.port });
      return new EgressNetwork(docker, name, bridge, proxy, log);
    } catch (error) {
      await log?.close();
      await proxy?.close();
      await network.remove().catch(() => undefined);
      throw error;
    }
  }

  /** What a command's environment gets so that curl, git, pip and npm use the proxy. */
  get env(): Record<string, string> {
    const url = this.#proxy.url;
    return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: 'localhost,127.0.0.1,::1', no_proxy: 'localhost,127.0.0.1,::1' };
  }

  /** Lines for a call's result: connections the container at `address` had refused since `since` (ms). */
  refusalNotes(address: string, since: number): string[] {
    return this.#proxy.refusals.since(address, since).map(describeRefusal);
  }

  forget(address: string): void {
    this.#proxy.refusals.forget(address);
  }

  /** After every container on it is gone. */
  async close(): Promise<void> {
    await this.#proxy.close();
    await this.#log?.close();
    await removeFirewall(this.#bridge);
    await this.#docker
      .getNetwork(this.name)
      .remove()
      .catch(() => undefined);
  }
}

/**
 * Removes egress networks (and their firewall rules) whose toolcell process
 * is dead: the start-up pass after a crash. Resolves with the names of the
 * networks removed.
 */
export async function removeLeftoverEgressNetworks(docker: Docker): Promise<string[]> {
  const networks = await docker.listNetworks({ filters: { label: [`${LABELS.sandbox}=1`] } });
  const removed: string[] = [];
  for (const info of networks) {
    if (!info.Name.startsWith(NETWORK_PREFIX) || ownerAlive(info.Labels ?? {})) continue;
    await removeFirewall(`tc${info.Name.slice(NETWORK_PREFIX.length)}`);
    const gone = await docker
      .getNetwork(info.Id)
      .remove()
      .then(
        () => true,
        () => false,
      );
    if (gone) removed.push(info.Name);
  }
  return removed;
}
