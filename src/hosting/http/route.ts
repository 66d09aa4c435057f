import type { IncomingMessage } from 'node:http';
import { requestPath, type RequestHandler } from './request-handler.js';

/** Handlers by exact path, and by path prefix (ending in `/`) for those that own a tree, such as `/admin/`. */
export interface Routes {
  exact?: Record<string, RequestHandler>;
  prefix?: Record<string, RequestHandler>;
}

/**
 * Picks the handler for a request, or undefined when none of the hosting
 * endpoints owns its path (the server then goes on to MCP or a 404). For the
 * main server to mount `/healthz`, `/readyz`, `/admin/…` and
 * `/.well-known/oauth-protected-resource…` in one place.
 */
export function createRouter(routes: Routes): (req: IncomingMessage) => RequestHandler | undefined {
  const exact = new Map(Object.entries(routes.exact ?? {}));
  const prefixes = Object.entries(routes.prefix ?? {}).sort(([a], [b]) => b.length - a.length);
  return (req) => {
    const path = requestPath(req);
    return exact.get(path) ?? prefixes.find(([prefix]) => path.startsWith(prefix))?.[1];
  };
}
