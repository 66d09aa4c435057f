import ipaddr from 'ipaddr.js';

/**
 * The sandbox's egress allowlist (`sandbox.network.allow`): which hosts and
 * ports a sandboxed command may reach through the egress proxy. An entry is
 * - a host name, `registry.npmjs.org` (that name only);
 * - `*.domain`, `*.pythonhosted.org` (any name under it, not the domain itself,
 *   as sandbox-runtime and Codex read it);
 * - an IP address, `10.0.0.5` or `[fd00::5]`, or a CIDR range, `10.0.0.0/8`;
 * each with an optional `:port` (IPv6 with a port in brackets,
 * `[fd00::5]:8080`); without one, ports 80 and 443.
 * An IP entry is also the only thing that lets a connection reach a private,
 * loopback or metadata address (see `addressIsPublic`).
 */

const DEFAULT_PORTS: readonly number[] = [80, 443];

type Matcher = { kind: 'name'; name: string } | { kind: 'subdomains'; domain: string } | { kind: 'range'; range: [ipaddr.IPv4 | ipaddr.IPv6, number] };

interface AllowEntry {
  readonly text: string;
  readonly matcher: Matcher;
  readonly ports: readonly number[];
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A host name as the proxy compares it: lower case, no trailing dot; undefined when it is not a valid DNS name. */
export function normalizeHostName(host: string): string | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name.length === 0 || name.length > 253) return undefined;
  return name.split('.').every((label) => LABEL.test(label)) ? name : undefined;
}

/** Parses an IP address in any form Node accepts as one (IPv4-mapped IPv6 becomes IPv4); undefined if `text` is not an IP literal. */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // isValidFourPartDecimal: `127.1` or `0x7f.0.0.1` are names here, never addresses.
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare) && bare.includes(':')) return ipaddr.process(bare);
  return undefined;
}

function parsePort(text: string, entry: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) throw new TypeError(`sandbox.network.allow: "${entry}" has an invalid port "${text}"`);
  return port;
}

/** Splits `host[:port]`, `[v6]:port`, `v6` and `cidr[:port]` into the host part and its ports. */
function splitPort(entry: string): { host: string; ports: readonly number[] } {
  const bracketed = /^\[([^\]]+)\](?::(\d*))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1]!, ports: bracketed[2] === undefined ? DEFAULT_PORTS : [parsePort(bracketed[2], entry)] };
  const colons = entry.split(':').length - 1;
  if (colons === 1) {
    const [host, port] = entry.split(':') as [string, string];
    return { host, ports: [parsePort(port, entry)] };
  }
  // No colon, or a bare IPv6 address / range (several colons): no port.
  return { host: entry, ports: DEFAULT_PORTS };
}

/** Ports a URL's scheme implies, for the entry a URL in the list meant. */
const SCHEME_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443, ws: 80, wss: 443, ftp: 21 };

/**
 * A URL where a host was expected (`http://example.com/path`): the message
 * says what the list takes and which entry the URL meant, so the fix is a copy.
 */
function urlEntryError(entry: string): TypeError | undefined {
  const url = /^([a-z][a-z0-9+.-]*):\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?/i.exec(entry);
  if (!url) return undefined;
  const scheme = url[1]!.toLowerCase();
  const host = url[2]!.toLowerCase();
  const port = url[3] || (SCHEME_PORTS[scheme] !== undefined ? String(SCHEME_PORTS[scheme]) : '');
  const meant = host === '' ? '' : ` (for this URL: "${port ? `${host}:${port}` : host}")`;
  return new TypeError(`sandbox.network.allow: "${entry}" is a URL; an entry is a host name with an optional :port, not a URL${meant}`);
}

function parseEntry(text: string): AllowEntry {
  const entry = text.trim();
  const asUrl = urlEntryError(entry);
  if (asUrl) throw asUrl;
  const { host, ports } = splitPort(entry);
  if (host.includes('/') && !/^[^/]+\/\d{1,3}$/.test(host)) {
    const name = host.slice(0, host.indexOf('/'));
    throw new TypeError(`sandbox.network.allow: "${entry}" has a path; an entry is a host name with an optional :port${name ? ` (here: "${name}")` : ''}`);
  }
  if (host.includes('/')) {
    try {
      // Addresses are compared after IPv4-mapped IPv6 becomes IPv4, so an
      // IPv4 range is listed in IPv4 form (`10.0.0.0/8`, not `::ffff:10.0.0.0/104`).
      return { text: entry, matcher: { kind: 'range', range: ipaddr.parseCIDR(host) }, ports };
    } catch {
      throw new TypeError(`sandbox.network.allow: "${entry}" is not a valid CIDR range`);
    }
  }
  const address = parseAddress(host);
  if (address) return { text: entry, matcher: { kind: 'range', range: [address, address.kind() === 'ipv4' ? 32 : 128] }, ports };
  if (host.startsWith('*.')) {
    const domain = normalizeHostName(host.slice(2));
    if (!domain || !domain.includes('.')) throw new TypeError(`sandbox.network.allow: "${entry}" must be *.<domain with a dot>, such as *.pythonhosted.org`);
    return { text: entry, matcher: { kind: 'subdomains', domain }, ports };
  }
  const name = normalizeHostName(host);
  if (!name) throw new TypeError(`sandbox.network.allow: "${entry}" is not a host name, *.domain, IP address or CIDR range`);
  return { text: entry, matcher: { kind: 'name', name }, ports };
}

function inRange(address: ipaddr.IPv4 | ipaddr.IPv6, range: [ipaddr.IPv4 | ipaddr.IPv6, number]): boolean {
  return address.kind() === range[0].kind() && address.match(range);
}

export class AllowList {
  readonly #entries: readonly AllowEntry[];

  /** Throws a TypeError naming the first entry that is not valid. */
  constructor(entries: readonly string[]) {
    this.#entries = entries.map(parseEntry);
  }

  /** The entry that lets a connection to host name `name` (normalized) on `port` through, if any. */
  entryForName(name: string, port: number): string | undefined {
    return this.#entries.find(
      (entry) =>
        entry.ports.includes(port) &&
        ((entry.matcher.kind === 'name' && entry.matcher.name === name) || (entry.matcher.kind === 'subdomains' && name.endsWith(`.${entry.matcher.domain}`))),
    )?.text;
  }

  /** The IP or CIDR entry listing this address on this port (any port when `port` is undefined), if any. */
  entryForAddress(address: ipaddr.IPv4 | ipaddr.IPv6, port?: number): string | undefined {
    return this.#entries.find(
      (entry) => entry.matcher.kind === 'range' && (port === undefined || entry.ports.includes(port)) && inRange(address, entry.matcher.range),
    )?.text;
  }
}
