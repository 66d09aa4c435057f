import { isLoopbackHost } from '../../../mcp/server/http-guard.js';

/**
 * The two names of this server that OAuth keeps apart:
 * - the audience: what a token's `aud` must hold to be for this server
 *   (`--audience`). RFC 7519 makes it a StringOrURI: any string, which must
 *   be a URI when it holds a colon (`toolcell`, `urn:example:toolcell`,
 *   `https://tools.example/mcp`);
 * - the resource URL: where clients reach the MCP endpoint, published in the
 *   RFC 9728 metadata and pointed at by every 401 (`--public-url` + `/mcp`).
 *   A client checks it against the URL it connected to, so it must be the
 *   public one, not the address the server listens on behind a proxy.
 */

/** RFC 3986's scheme, then anything without spaces or controls: a URI as far as a configuration check can tell. */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\p{Cc}]+$/u;

/** Why `value` cannot be a token audience, or undefined when it can. */
export function audienceProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty';
  if (value.length > 2048) return 'is longer than 2048 characters';
  // eslint-disable-next-line no-control-regex -- control characters are what is refused.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return 'holds a control character';
  if (value !== value.trim()) return 'begins or ends with white space';
  if (value.includes(':') && (!URI.test(value) || !URL.canParse(value))) {
    return 'holds a colon, so it must be a URI (RFC 7519 StringOrURI), and is not one (e.g. toolcell, urn:example:toolcell, https://tools.example/mcp)';
  }
  return undefined;
}

/** A `--public-url` checked: the base clients use, without a trailing slash (`https://tools.example`, `https://example.com/toolcell`). */
export interface PublicUrl {
  /** The base as given, normalized: `https://tools.example`. */
  base: string;
  /** The MCP endpoint clients use: `<base>/mcp`, the resource of RFC 9728. */
  resource: string;
  /** The host name (or IP address, without brackets) a TLS certificate must name. */
  hostname: string;
}

/**
 * Checks a public base URL: absolute, `https` (or `http` to a loopback
 * address, for local use), no user name or password, query or fragment
 * (RFC 9728: the resource identifier has no fragment; a query would make
 * it one no client expects). Throws a TypeError saying what is wrong,
 * prefixed with `name` (the flag or option).
 */
export function parsePublicUrl(value: string, name: string): PublicUrl {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} ${JSON.stringify(value)} is not an absolute URL (e.g. https://tools.example)`);
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(hostname))) {
    throw new TypeError(`${name} ${JSON.stringify(value)} must be an https:// URL (http:// only for a loopback address)`);
  }
  if (url.username !== '' || url.password !== '') throw new TypeError(`${name} ${JSON.stringify(value)} must not hold a user name or password`);
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) {
    throw new TypeError(`${name} ${JSON.stringify(value)} must not have a query or a fragment`);
  }
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  if (/\/mcp$/.test(base))
    throw new TypeError(`${name} ${JSON.stringify(value)} must be the server's address without /mcp (toolcell adds /mcp): ${base.slice(0, -4)}`);
  return { base, resource: `${base}/mcp`, hostname };
}
