import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A plain Node request handler: what every hosting endpoint (metrics,
 * health, admin, protected-resource metadata) is, so the main server can
 * mount it on a path and the metrics listener can serve it alone.
 */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** The request's path, without its query. */
export function requestPath(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://localhost').pathname;
}

/** Writes a JSON body with its status; `no-store`, since hosting answers are never for caches. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers }).end(JSON.stringify(body));
}

/** 405 with the `Allow` header naming what the path accepts. */
export function sendMethodNotAllowed(res: ServerResponse, allowed: string[]): void {
  sendJson(res, 405, { error: 'method_not_allowed', allowed }, { Allow: allowed.join(', ') });
}
