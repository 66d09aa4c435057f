import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_MAX_BODY_DEPTH, DEFAULT_MAX_BODY_VALUES, jsonShapeProblem } from './json-shape.js';

/** The largest JSON body the MCP endpoint reads. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A refusal sent as is: HTTP status, extra headers, and a JSON-RPC error whose `data.type` is a stable code when given. */
export interface HttpRefusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
  /** A stable error code (`quota_exceeded`), sent as the JSON-RPC error's `data.type`. */
  type?: string;
  /** More of the error's `data` (e.g. the limit's name). */
  data?: Record<string, unknown>;
  /** The JSON-RPC error code; default -32000 (-32700 for a body that is not JSON). */
  code?: number;
}

/** Sends a refusal as a JSON-RPC error, with its status and headers. */
export function sendRefusal(res: ServerResponse, refusal: HttpRefusal): void {
  const data =
    refusal.type !== undefined || refusal.data !== undefined
      ? { data: { ...(refusal.type !== undefined ? { type: refusal.type } : {}), ...refusal.data } }
      : {};
  res
    .writeHead(refusal.status, { 'Content-Type': 'application/json', ...refusal.headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: refusal.code ?? -32000, message: refusal.message, ...data }, id: null }));
}

/** Sends a JSON-RPC error with no request id. */
export function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The body as JSON, or undefined when it is not JSON, passes MAX_BODY_BYTES or has more values or depth than json-shape.ts allows. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    const bytes = Buffer.concat(chunks);
    // What the parse would build is bounded too, not only the bytes (json-shape.ts).
    if (jsonShapeProblem(bytes, { maxValues: DEFAULT_MAX_BODY_VALUES, maxDepth: DEFAULT_MAX_BODY_DEPTH })) return undefined;
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}
