import { lookup } from 'node:dns/promises';

/** Resolves a host name to its addresses (IPv4 and IPv6). The proxy takes its own, so tests can map names to local servers. */
export type HostResolver = (name: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (name) => (await lookup(name, { all: true, verbatim: true })).map((entry) => entry.address);

/** A resolver answering from a fixed map (tests, or an operator pinning names); names not in it fail as unknown. */
export function mapResolver(map: Readonly<Record<string, string | readonly string[]>>): HostResolver {
  return async (name) => {
    const found = map[name];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return typeof found === 'string' ? [found] : [...found];
  };
}
