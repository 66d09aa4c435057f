import { addressIsPublic } from './address-class.js';
import { AllowList, normalizeHostName, parseAddress } from './allow-list.js';
import { SETTINGS_WORDING, type EgressWording } from './egress-wording.js';
import { type HostResolver, systemResolver } from './resolver.js';

/** Where a permitted connection goes: the address is the one checked, so a second lookup cannot swap it (DNS rebinding). */
export interface EgressPermit {
  allowed: true;
  host: string;
  port: number;
  address: string;
  /** The allowlist entry that let it through. */
  entry: string;
}

export interface EgressRefusal {
  allowed: false;
  host: string;
  port: number;
  /** Why, in words the model can act on: `not in sandbox.network.allow` (the list as `wording` names it), `resolves to 127.0.0.1 (loopback)`. */
  reason: string;
}

export type EgressDecision = EgressPermit | EgressRefusal;

export interface EgressGateOptions {
  /** `sandbox.network.allow` entries. */
  allow: readonly string[];
  /** Default: the system resolver (getaddrinfo). */
  resolver?: HostResolver;
  /** How refusals name the list; default the settings' `sandbox.network.allow` (a hosting tenant's is its own, tenant-network.ts). */
  wording?: Pick<EgressWording, 'list'>;
}

/**
 * Decides whether a connection to `host:port` may leave the sandbox, and to
 * which address. Shared by the egress proxy and web_fetch (for every
 * redirect hop), so both follow one rule:
 * - an IP literal only when an IP or CIDR entry lists it;
 * - a name only when a name or `*.domain` entry lists it with the port, and
 *   then only to an address it resolves to that is public unicast, or that an
 *   IP entry lists.
 */
export class EgressGate {
  readonly #allow: AllowList;
  readonly #resolve: HostResolver;
  readonly #list: string;

  constructor(options: EgressGateOptions) {
    this.#allow = new AllowList(options.allow);
    this.#resolve = options.resolver ?? systemResolver;
    this.#list = (options.wording ?? SETTINGS_WORDING).list;
  }

  async decide(host: string, port: number): Promise<EgressDecision> {
    const refuse = (reason: string): EgressRefusal => ({ allowed: false, host, port, reason });
    if (!Number.isInteger(port) || port < 1 || port > 65535) return refuse('invalid port');
    const literal = parseAddress(host);
    if (literal) {
      const entry = this.#allow.entryForAddress(literal, port);
      return entry ? { allowed: true, host, port, address: literal.toString(), entry } : refuse(`IP address not in ${this.#list}`);
    }
    const name = normalizeHostName(host);
    if (!name) return refuse('not a valid host name');
    const entry = this.#allow.entryForName(name, port);
    if (!entry) return refuse(`not in ${this.#list}`);
    let addresses: string[];
    try {
      addresses = await this.#resolve(name);
    } catch (error) {
      return refuse(`does not resolve (${(error as { code?: string }).code ?? 'lookup failed'})`);
    }
    const blocked: string[] = [];
    for (const text of addresses) {
      const address = parseAddress(text);
      if (!address) continue;
      if (addressIsPublic(address) || this.#allow.entryForAddress(address, port) !== undefined) {
        return { allowed: true, host, port, address: address.toString(), entry };
      }
      blocked.push(`${address.toString()} (${address.range()})`);
    }
    return refuse(blocked.length > 0 ? `resolves only to non-public ${blocked.join(', ')}, not listed in ${this.#list}` : 'resolves to no address');
  }
}
