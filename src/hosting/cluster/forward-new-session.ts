import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'node:https';
import type { Authenticator } from '../auth/principal.js';
import { requestPath } from '../http/request-handler.js';

/** Set on a session opening forwarded by another node: it is never forwarded again (a placement in flux must not bounce). */
export const FORWARDED_HEADER = 'x-toolcell-forwarded-by';

export interface ForwardNewSessionOptions {
  /** This node's name. */
  node: string;
  /**
   * The server's own authenticators (API keys, then OIDC), tried in order as
   * the server does: credentials this node refuses (an unknown or revoked
   * key, a token that does not verify) are refused here, never passed on.
   */
  authenticators: readonly Authenticator[];
  /** The node a tenant lives on (undefined: not placed, served here). */
  placement(tenant: string): string | undefined;
  /** Where a serving node's server is reached (`https://ADDRESS:PORT`); undefined when it is not serving. */
  nodeUrl(node: string): Promise<string | undefined>;
  /** TLS to the other node: the cluster's CA, the name every server's certificate carries, this server's own pair as client certificate. */
  tls: { ca: Buffer; serverName: string; cert?: Buffer; key?: Buffer };
  onLog(message: string): void;
}

/**
 * The gate before a node's hosting server (createHostingServer's
 * `node.intercept`): a new MCP session (POST /mcp without Mcp-Session-Id)
 * of a tenant placed on another node is passed to that node, request and
 * answer streamed as they are, so the session opens where the tenant's
 * workspace is and its id names that node; the front then routes its later
 * requests there. Everything else (requests of a session, another path, a
 * tenant of this node, credentials this node refuses) is this node's own.
 *
 * The client's key or OIDC access token goes on to the other node of the
 * same service, over TLS checked against the cluster's CA, where it is
 * verified again: every node is the one resource the token was issued for
 * (the same --public-url, issuer and audience), not a third party, so this
 * is not the token passthrough MCP's authorization spec forbids (a server
 * handing a client's token to another service). Re-verifying, rather than
 * sending the principal this node found, keeps one rule on every node: a
 * session opens only on credentials that node checked itself, and a node's
 * TLS certificate alone never speaks for a tenant.
 * The tenant's node not serving: 503 with Retry-After, naming no host.
 */
export function forwardNewSessions(options: ForwardNewSessionOptions): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return async (req, res) => {
    if (req.method !== 'POST' || requestPath(req) !== '/mcp' || req.headers['mcp-session-id'] !== undefined) return false;
    const bearer = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const authenticator = bearer === undefined ? undefined : options.authenticators.find((candidate) => candidate.recognises(bearer));
    if (bearer === undefined || authenticator === undefined) return false;
    const outcome = await authenticator.authenticate(bearer, req);
    if (!outcome.ok) return false;
    const home = options.placement(outcome.principal.tenant);
    if (home === undefined || home === options.node) return false;
    if (req.headers[FORWARDED_HEADER] !== undefined) return unavailable(res, 'the tenant is being moved');
    const url = await options.nodeUrl(home);
    if (url === undefined) return unavailable(res, "the tenant's node is not serving");
    const target = new URL('/mcp', url);
    await new Promise<void>((resolve) => {
      const headers = { ...req.headers, host: target.host, [FORWARDED_HEADER]: options.node };
      const outgoing = request(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: 'POST',
          headers,
          ca: options.tls.ca,
          servername: options.tls.serverName,
          ...(options.tls.cert && options.tls.key ? { cert: options.tls.cert, key: options.tls.key } : {}),
          timeout: 30_000,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', resolve);
          answer.on('error', () => resolve(void res.destroy()));
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error('timed out')));
      outgoing.on('error', (error) => {
        options.onLog(`cluster: forwarding a new session to node ${home}: ${error.message}`);
        if (!res.headersSent) unavailable(res, "the tenant's node did not answer");
        else res.destroy();
        resolve();
      });
      req.pipe(outgoing);
    });
    return true;
  };
}

function unavailable(res: ServerResponse, why: string): true {
  res
    .writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '5', 'Cache-Control': 'no-store' })
    .end(JSON.stringify({ error: 'unavailable', message: `${why}: try again shortly` }));
  return true;
}
