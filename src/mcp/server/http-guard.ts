import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

export function isWildcardHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === '0.0.0.0' || bare === '::';
}

/** What a bearer token must be: at least 8 printable ASCII characters, no spaces (the header's own rules, and not trivially short). */
export function isAcceptableToken(token: string): boolean {
  return /^[\x21-\x7e]{8,}$/.test(token);
}

/** The one sentence saying so, for `--token` and `serveHttp`. */
export const TOKEN_RULE = 'must be at least 8 printable characters without spaces';

export interface HttpGuardOptions {
  /** The address the server is bound to. */
  host: string;
  port: number;
  /** Bearer token every request must carry; required by `serveHttp` off loopback. */
  token?: string;
  /** More `Host` header values to accept (e.g. a DNS name that points here). */
  allowedHosts?: string[];
}

/** Why a request is refused, as an HTTP status and a one-line reason. */
export interface Refusal {
  status: 401 | 403;
  message: string;
}

/**
 * The checks every request to `toolcell serve --http` passes before it
 * reaches MCP: against DNS rebinding, the `Host` header must name this
 * server (for a loopback bind: 127.0.0.1, localhost or [::1] with the
 * port; for a wildcard bind any host, since the token guards it) and an
 * `Origin`, when a browser sends one, must be the same host; then the bearer
 * token, compared in constant time.
 */
export function createHttpGuard(options: HttpGuardOptions): (req: IncomingMessage) => Refusal | undefined {
  const allowed = new Set((options.allowedHosts ?? []).map((host) => host.toLowerCase()));
  const bracket = (host: string) => (isIP(host) === 6 ? `[${host}]` : host);
  if (isLoopbackHost(options.host)) {
    for (const name of ['127.0.0.1', 'localhost', '[::1]', bracket(options.host)]) allowed.add(`${name}:${options.port}`.toLowerCase());
  } else if (!isWildcardHost(options.host)) {
    allowed.add(`${bracket(options.host)}:${options.port}`.toLowerCase());
  }
  const anyHost = isWildcardHost(options.host);
  const expectedToken = options.token === undefined ? undefined : digest(options.token);

  return (req) => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!anyHost && !allowed.has(host)) return { status: 403, message: `Invalid Host header: ${host || '(missing)'}` };
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      let originHost: string;
      try {
        const url = new URL(origin);
        originHost = (url.port ? url.host : `${url.hostname}:${url.protocol === 'https:' ? 443 : 80}`).toLowerCase();
      } catch {
        return { status: 403, message: `Invalid Origin header: ${origin}` };
      }
      const sameHost = anyHost ? originHost === host : allowed.has(originHost);
      if (!sameHost) return { status: 403, message: `Invalid Origin header: ${origin}` };
    } else if (origin === 'null') {
      return { status: 403, message: 'Invalid Origin header: null' };
    }
    if (expectedToken !== undefined) {
      const given = req.headers.authorization;
      if (given === undefined) return { status: 401, message: 'Missing bearer token (Authorization: Bearer <token>)' };
      // The scheme name is case-insensitive (RFC 9110, section 11.1); the token is not.
      const match = /^\s*bearer\s+(\S+)\s*$/i.exec(given);
      if (!match || !timingSafeEqual(digest(match[1]!), expectedToken)) return { status: 401, message: 'Invalid bearer token' };
    }
    return undefined;
  };
}

/** Hashing first gives equal-length buffers, so the comparison leaks nothing about the token's length. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
