import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { sendJson, sendMethodNotAllowed, type RequestHandler } from '../../http/request-handler.js';

/** The well-known prefix of RFC 9728. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceOptions {
  /**
   * The MCP endpoint's URL as clients reach it, e.g. `https://tools.example/mcp`
   * (`--public-url` + `/mcp`): a client checks it against the URL it connected
   * to. Not necessarily the audience tokens are checked for (`--audience`).
   */
  resource: string;
  /** The issuers whose tokens are accepted (`--oidc-issuer`). */
  authorizationServers: string[];
  scopesSupported?: string[];
  resourceName?: string;
}

export interface ProtectedResource {
  /** The RFC 9728 document (the MCP SDK's own type). */
  document: OAuthProtectedResourceMetadata;
  /**
   * Where the document is served: the path-aware form RFC 9728 defines
   * (`/.well-known/oauth-protected-resource/mcp`) first, then the root form
   * older clients ask for.
   */
  paths: string[];
  /** The absolute URL of the first path: the `resource_metadata` of the 401 header. */
  url: string;
  /** Serves the document on `paths`; mount it for each. */
  handler: RequestHandler;
}

/**
 * RFC 9728 protected-resource metadata: tells an MCP client which
 * authorization server issues tokens for this server, so it can get one.
 */
export function protectedResourceMetadata(options: ProtectedResourceOptions): ProtectedResource {
  const resource = new URL(options.resource);
  const document: OAuthProtectedResourceMetadata = {
    resource: resource.href,
    authorization_servers: options.authorizationServers,
    bearer_methods_supported: ['header'],
    ...(options.scopesSupported ? { scopes_supported: options.scopesSupported } : {}),
    ...(options.resourceName ? { resource_name: options.resourceName } : {}),
  };
  // The same rule as the SDK's getOAuthProtectedResourceMetadataUrl (server/auth/router.js), whose module needs Express.
  const suffix = resource.pathname !== '/' ? resource.pathname.replace(/\/$/, '') : '';
  const paths = [...new Set([`${PROTECTED_RESOURCE_WELL_KNOWN}${suffix}`, PROTECTED_RESOURCE_WELL_KNOWN])];
  const body = JSON.stringify(document);
  const handler: RequestHandler = (req, res) => {
    if (req.method === 'OPTIONS') {
      res
        .writeHead(204, { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET', 'Access-Control-Allow-Headers': 'MCP-Protocol-Version' })
        .end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendMethodNotAllowed(res, ['GET', 'HEAD', 'OPTIONS']);
    // Public metadata that browser-based clients read too.
    sendJson(res, 200, JSON.parse(body), { 'Access-Control-Allow-Origin': '*' });
  };
  return { document, paths, url: new URL(paths[0]!, resource).href, handler };
}
