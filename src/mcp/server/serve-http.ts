import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { ToolServerOptions } from './create-tool-server.js';
import { createToolServer } from './create-tool-server.js';
import { createHttpGuard, isLoopbackHost } from './http-guard.js';
import type { ServeSession, ServeSessionFactory } from './session.js';

/** The endpoint path of the Streamable HTTP transport. */
export const MCP_HTTP_PATH = '/mcp';
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface ServeHttpOptions {
  createSession: ServeSessionFactory;
  createScheduler: ToolServerOptions['createScheduler'];
  /** Address to bind; default 127.0.0.1. Any non-loopback address requires `token`. */
  host?: string;
  /** Port; 0 picks a free one. */
  port: number;
  token?: string;
  /** Extra accepted `Host` header values. */
  allowedHosts?: string[];
  /** At most this many sessions at once (each holds a sandbox); default 16. */
  maxSessions?: number;
  /** A session with no running call and no request for this long is closed; default 30 minutes. */
  sessionIdleMs?: number;
  /** Problems worth a line on stderr (a session that failed to open, …). */
  onLog?: (message: string) => void;
}

export interface RunningHttpServer {
  /** `http://host:port/mcp`. */
  readonly url: string;
  readonly port: number;
  readonly sessionCount: number;
  /** Stops accepting requests, aborts in-flight calls and closes every session. */
  close(): Promise<void>;
}

interface SessionEntry {
  transport: StreamableHTTPServerTransport;
  session: ServeSession;
  lastActivity: number;
  /** POST responses still open (a running call streams its result): the session is not idle. */
  openResponses: number;
}

/**
 * Serves MCP over Streamable HTTP at `/mcp`, one MCP session per client
 * (`Mcp-Session-Id`), each with its own ServeSession (its own sandbox).
 * Requests pass the Host/Origin/token guard first; binding anything but a
 * loopback address without a token is refused.
 */
export async function serveHttp(options: ServeHttpOptions): Promise<RunningHttpServer> {
  const host = options.host ?? '127.0.0.1';
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new RangeError('serveHttp: options.port must be an integer 0-65535');
  if (options.token !== undefined && !/^[\x21-\x7e]{8,}$/.test(options.token)) {
    throw new RangeError('serveHttp: options.token must be at least 8 printable characters without spaces');
  }
  if (!isLoopbackHost(host) && options.token === undefined) {
    throw new ToolcellError(ToolErrorType.TOKEN_REQUIRED, `Serving on ${host} (not a loopback address) requires a bearer token (--token).`);
  }
  const maxSessions = options.maxSessions ?? 16;
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const log = options.onLog ?? (() => {});
  const sessions = new Map<string, SessionEntry>();
  let closing = false;

  const closeSession = async (id: string): Promise<void> => {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    await entry.transport.close().catch(() => {});
    await entry.session.close().catch((error: unknown) => log(`closing session ${id}: ${String(error)}`));
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) sendError(res, 500, -32603, 'Internal server error');
      else res.end();
    });
  });
  let guard: ReturnType<typeof createHttpGuard>;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== MCP_HTTP_PATH) return sendError(res, 404, -32000, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    const refusal = guard(req);
    if (refusal) {
      if (refusal.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, refusal.status, -32000, refusal.message);
    }
    if (closing) return sendError(res, 503, -32000, 'Server is shutting down');
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const entry = sessions.get(sessionId);
      if (!entry) return sendError(res, 404, -32001, 'Session not found');
      track(entry, req, res);
      return entry.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return sendError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header; start a session with an initialize request');
    const body = await readJsonBody(req);
    if (body === undefined) return sendError(res, 400, -32700, 'Parse error: the body must be JSON of at most 4 MB');
    if (!isInitializeRequest(body)) return sendError(res, 400, -32000, 'Bad Request: no valid session ID provided');
    if (sessions.size >= maxSessions) return sendError(res, 503, -32000, `Too many sessions (at most ${maxSessions})`);
    return openSession(req, res, body);
  }

  async function openSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const id = randomUUID();
    let session: ServeSession;
    try {
      session = await options.createSession(id);
    } catch (error) {
      log(`could not open session: ${error instanceof Error ? error.message : String(error)}`);
      return sendError(res, 500, -32603, `Could not open a session: ${error instanceof Error ? error.message : String(error)}`);
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, session, lastActivity: Date.now(), openResponses: 0 });
      },
    });
    transport.onclose = () => void closeSession(id);
    const server = createToolServer({ registry: session.registry, createScheduler: options.createScheduler });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (!sessions.has(id)) {
      // Initialization failed (e.g. a bad protocol version): nothing to keep.
      await transport.close().catch(() => {});
      await session.close().catch(() => {});
    }
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  guard = createHttpGuard({ host, port, ...(options.token !== undefined ? { token: options.token } : {}), ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}) });

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, entry] of sessions) if (entry.openResponses === 0 && now - entry.lastActivity > idleMs) void closeSession(id);
  }, Math.min(idleMs, 60_000));
  sweeper.unref();

  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}${MCP_HTTP_PATH}`,
    port,
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      closing = true;
      clearInterval(sweeper);
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.all([...sessions.keys()].map((id) => closeSession(id)));
      http.closeAllConnections();
      await closed;
    },
  };
}

/**
 * Activity is a request's start and end. A POST counts as open until its
 * response closes (a call may run for long); a GET (the client's standing
 * event stream) does not keep a session alive, or a forgotten client would
 * hold its sandbox forever.
 */
function track(entry: SessionEntry, req: IncomingMessage, res: ServerResponse): void {
  entry.lastActivity = Date.now();
  if (req.method !== 'POST') return;
  entry.openResponses++;
  res.once('close', () => {
    entry.openResponses--;
    entry.lastActivity = Date.now();
  });
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
