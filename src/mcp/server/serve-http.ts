import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { ToolServerOptions } from './create-tool-server.js';
import { createToolServer } from './create-tool-server.js';
import { createHttpGuard, isAcceptableToken, isLoopbackHost, TOKEN_RULE, type Refusal } from './http-guard.js';
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
export function serveHttp(options: ServeHttpOptions): Promise<RunningHttpServer> {
  return McpHttpServer.listen(options);
}

/**
 * The server behind serveHttp: its sessions, the request handling that
 * routes to them, and the sweeper that closes idle ones.
 */
class McpHttpServer implements RunningHttpServer {
  readonly #options: ServeHttpOptions;
  readonly #http: Server;
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #maxSessions: number;
  readonly #idleMs: number;
  readonly #log: (message: string) => void;
  #guard: ((req: IncomingMessage) => Refusal | undefined) | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  #closing = false;
  #url = '';
  #port = 0;

  /** Checks the options, binds, and starts the sweeper. */
  static async listen(options: ServeHttpOptions): Promise<McpHttpServer> {
    const host = options.host ?? '127.0.0.1';
    if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new RangeError('serveHttp: options.port must be an integer 0-65535');
    if (options.token !== undefined && !isAcceptableToken(options.token)) throw new RangeError(`serveHttp: options.token ${TOKEN_RULE}`);
    if (!isLoopbackHost(host) && options.token === undefined) {
      throw new ToolcellError(ToolErrorType.TOKEN_REQUIRED, `Serving on ${host} (not a loopback address) requires a bearer token (--token).`);
    }
    const server = new McpHttpServer(options);
    await server.#bind(host);
    return server;
  }

  private constructor(options: ServeHttpOptions) {
    this.#options = options;
    this.#maxSessions = options.maxSessions ?? 16;
    this.#idleMs = options.sessionIdleMs ?? 30 * 60_000;
    this.#log = options.onLog ?? (() => {});
    this.#http = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        this.#log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
        if (!res.headersSent) sendError(res, 500, -32603, 'Internal server error');
        else res.end();
      });
    });
  }

  get url(): string {
    return this.#url;
  }

  get port(): number {
    return this.#port;
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweeper);
    const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
    await Promise.all([...this.#sessions.keys()].map((id) => this.#closeSession(id)));
    this.#http.closeAllConnections();
    await closed;
  }

  async #bind(host: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#http.once('error', reject);
      this.#http.listen(this.#options.port, host, () => {
        this.#http.off('error', reject);
        resolve();
      });
    });
    this.#port = (this.#http.address() as AddressInfo).port;
    // The guard needs the bound port (the Host header names it), so it exists only from here on.
    this.#guard = createHttpGuard({
      host,
      port: this.#port,
      ...(this.#options.token !== undefined ? { token: this.#options.token } : {}),
      ...(this.#options.allowedHosts ? { allowedHosts: this.#options.allowedHosts } : {}),
    });
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(this.#idleMs, 60_000));
    this.#sweeper.unref();
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${this.#port}${MCP_HTTP_PATH}`;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.#sessions) if (entry.openResponses === 0 && now - entry.lastActivity > this.#idleMs) void this.#closeSession(id);
  }

  async #closeSession(id: string): Promise<void> {
    const entry = this.#sessions.get(id);
    if (!entry) return;
    this.#sessions.delete(id);
    await entry.transport.close().catch(() => {});
    await entry.session.close().catch((error: unknown) => this.#log(`closing session ${id}: ${String(error)}`));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== MCP_HTTP_PATH) return sendError(res, 404, -32000, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    const refusal = this.#guard ? this.#guard(req) : { status: 503, message: 'Server is starting' };
    if (refusal) {
      if (refusal.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, refusal.status, -32000, refusal.message);
    }
    if (this.#closing) return sendError(res, 503, -32000, 'Server is shutting down');
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const entry = this.#sessions.get(sessionId);
      if (!entry) return sendError(res, 404, -32001, 'Session not found');
      track(entry, req, res);
      return entry.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return sendError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header; start a session with an initialize request');
    const body = await readJsonBody(req);
    if (body === undefined) return sendError(res, 400, -32700, 'Parse error: the body must be JSON of at most 4 MB');
    if (!isInitializeRequest(body)) return sendError(res, 400, -32000, 'Bad Request: no valid session ID provided');
    if (this.#sessions.size >= this.#maxSessions) return sendError(res, 503, -32000, `Too many sessions (at most ${this.#maxSessions})`);
    return this.#openSession(req, res, body);
  }

  async #openSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const id = randomUUID();
    let session: ServeSession;
    try {
      session = await this.#options.createSession(id);
    } catch (error) {
      this.#log(`could not open session: ${error instanceof Error ? error.message : String(error)}`);
      return sendError(res, 500, -32603, `Could not open a session: ${error instanceof Error ? error.message : String(error)}`);
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: (sessionId) => {
        this.#sessions.set(sessionId, { transport, session, lastActivity: Date.now(), openResponses: 0 });
      },
    });
    transport.onclose = () => void this.#closeSession(id);
    const server = createToolServer({ registry: session.registry, createScheduler: this.#options.createScheduler });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (!this.#sessions.has(id)) {
      // Initialization failed (e.g. a bad protocol version): nothing to keep.
      await transport.close().catch(() => {});
      await session.close().catch(() => {});
    }
  }
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
