import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { functionOption, parseOptions } from '../../contracts/parse-options.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { AroundToolCall, ToolServerOptions } from './create-tool-server.js';
import { createToolServer } from './create-tool-server.js';
import { createHttpGuard, isAcceptableToken, isLoopbackHost, TOKEN_RULE, type Refusal } from './http-guard.js';
import { readJsonBody, sendError, sendRefusal, type HttpRefusal } from './http-replies.js';
import { requestIds, RunningRequests } from './running-requests.js';
import { DEFAULT_MAX_BODY_DEPTH, DEFAULT_MAX_BODY_VALUES } from './json-shape.js';
import type { ServeSession, ServeSessionFactory } from './session.js';
import { sharedJsonEncodeThread } from './json-encode-thread.js';
import { OffThreadSseTransport } from './off-thread-sse-transport.js';

export type { HttpRefusal } from './http-replies.js';

/** The endpoint path of the Streamable HTTP transport. */
export const MCP_HTTP_PATH = '/mcp';

/** Thrown by `createSession` to refuse a session with this reply instead of a 500. */
export class SessionRefusal extends Error {
  readonly refusal: HttpRefusal;
  constructor(refusal: HttpRefusal) {
    super(refusal.message);
    this.refusal = refusal;
  }
}

/** Who sent a request (`authenticate`'s answer), or the reply that refuses it. */
export type Admission<Caller> = { caller: Caller } | { refusal: HttpRefusal };

/** A live MCP session, for listing and for the open/close hooks. */
export interface LiveHttpSession<Caller> {
  id: string;
  /** Who opened it; undefined without `authenticate`. */
  caller: Caller | undefined;
  ageMs: number;
  /** Tool calls it has made. */
  calls: number;
  /** Time since its last request started or ended (0 while one runs). */
  inactiveMs: number;
  /** Whether its client holds the session's event stream (GET) open now. */
  streamOpen: boolean;
}

/**
 * Why a session closed: the client ended it (DELETE), a timeout (`idle`;
 * `abandoned`: its client seems gone), the server, or the reason given to
 * closeSession.
 */
export type HttpSessionCloseReason = 'client' | 'idle' | 'abandoned' | 'max_lifetime' | 'shutdown' | 'error' | (string & {});

export interface ServeHttpOptions<Caller = unknown> {
  createSession: ServeSessionFactory<Caller>;
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
  /**
   * A session whose client seems gone, with no running call, no request and
   * no event stream (GET) open for this long, is closed; default 2 minutes.
   * A client that closes without a DELETE (the MCP Inspector's CLI) would
   * otherwise hold its sandbox, and its tenant's session quota, until
   * `sessionIdleMs`. A client still there keeps its stream open (the SDKs do).
   */
  sessionAbandonedMs?: number;
  /** Problems worth a line on stderr (a session that failed to open, …). */
  onLog?: (message: string) => void;
  /**
   * Who sent a request, checked after the Host/Origin guard and instead of
   * `token` (which must then be absent). Its refusal (401 with
   * `WWW-Authenticate`, …) is sent as is. Binding off loopback is allowed.
   */
  authenticate?: (req: IncomingMessage) => Promise<Admission<Caller>>;
  /**
   * Whether `caller` may use a session that `owner` opened. A refused
   * request gets exactly the 404 an unknown session id gets, so a session id
   * is worth nothing with another caller's credentials. Default: always.
   */
  sameOwner?: (owner: Caller, caller: Caller) => boolean;
  /**
   * Checks a POST's JSON-RPC message(s) before MCP sees them (a rate limit,
   * how many answers a caller may have open: `res` closes when its answer is
   * taken or its connection ends); a refusal is sent as is.
   */
  admitMessage?: (caller: Caller | undefined, body: unknown, res: ServerResponse) => HttpRefusal | undefined;
  /**
   * Reads a POST's JSON body, after `authenticate` (so nobody unknown makes
   * the server buffer anything): a hosting server's budget of buffered bytes
   * per tenant and server-wide, its read timeout. A refusal is sent as is.
   * Default: `readJsonBody` (at most 4 MB, 50,000 JSON values and 64 levels of nesting; nothing else bounded).
   */
  readBody?: (req: IncomingMessage, res: ServerResponse, caller: Caller | undefined) => Promise<{ body: unknown } | { refusal: HttpRefusal }>;
  /**
   * Handlers for paths other than /mcp (health, OAuth metadata, an admin
   * API), after the Host/Origin guard and without `authenticate`: each
   * checks what it needs itself. Undefined for a path: 404.
   */
  otherPaths?: (req: IncomingMessage) => ((req: IncomingMessage, res: ServerResponse) => void | Promise<void>) | undefined;
  /**
   * Put before every session id this server mints (a cluster node's `<node>.`,
   * so a front can route a session's requests to the node that holds it). Default none.
   */
  sessionIdPrefix?: string;
  /** Makes the listening server (TLS, header and body timeouts); default a plain node:http server. */
  createListener?: (handler: (req: IncomingMessage, res: ServerResponse) => void) => Server;
  onSessionOpen?: (session: LiveHttpSession<Caller>) => void;
  onSessionClose?: (session: LiveHttpSession<Caller>, reason: HttpSessionCloseReason) => void;
  /** How often idle, abandoned and expired sessions are looked for; default min(sessionIdleMs, sessionAbandonedMs, 10 s). */
  sweepIntervalMs?: number;
}

const positiveMs = () => z.number().int().min(1).optional();

/** Checks ServeHttpOptions (the interface says what each does); the callbacks only for being functions. */
const serveHttpOptionsSchema = z
  .strictObject({
    createSession: functionOption<ServeSessionFactory<unknown>>(),
    createScheduler: functionOption<ToolServerOptions['createScheduler']>(),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535),
    token: z.string().refine(isAcceptableToken, { error: TOKEN_RULE }).optional(),
    allowedHosts: z.array(z.string().min(1)).optional(),
    maxSessions: z.number().int().min(1).optional(),
    sessionIdleMs: positiveMs(),
    sessionAbandonedMs: positiveMs(),
    onLog: functionOption<(message: string) => void>().optional(),
    authenticate: functionOption<unknown>().optional(),
    sameOwner: functionOption<unknown>().optional(),
    admitMessage: functionOption<unknown>().optional(),
    readBody: functionOption<unknown>().optional(),
    otherPaths: functionOption<unknown>().optional(),
    createListener: functionOption<unknown>().optional(),
    onSessionOpen: functionOption<unknown>().optional(),
    onSessionClose: functionOption<unknown>().optional(),
    sweepIntervalMs: positiveMs(),
    sessionIdPrefix: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$/, { error: 'must be letters, digits, dots and dashes (it starts every Mcp-Session-Id)' })
      .optional(),
  })
  .refine((options) => options.token === undefined || options.authenticate === undefined, {
    path: ['authenticate'],
    error: 'must not be given with options.token (they exclude each other)',
  });

export interface RunningHttpServer<Caller = unknown> {
  /** `http://host:port/mcp`. */
  readonly url: string;
  readonly port: number;
  readonly sessionCount: number;
  /** Every live MCP session, oldest first. */
  listSessions(): Array<LiveHttpSession<Caller>>;
  /** Closes one session (its calls aborted, its sandbox ended); false when there is none by that id. */
  closeSession(id: string, reason: HttpSessionCloseReason): Promise<boolean>;
  /**
   * Stops accepting requests (new ones get 503), lets running calls finish
   * for up to `drainMs` (default 0), then aborts the rest and closes every session.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

interface SessionEntry<Caller> {
  transport: StreamableHTTPServerTransport;
  /** The session's MCP server, to tell the client why the session ends. */
  server: McpServer;
  session: ServeSession;
  caller: Caller | undefined;
  openedAt: number;
  calls: number;
  lastActivity: number;
  idleMs: number;
  abandonedMs: number;
  /** POST responses still open (a running call streams its result): the session is not idle. */
  openResponses: number;
  /** Event streams (GET) its client holds open: its client is there, though it may be idle. */
  openStreams: number;
  /** Its requests being answered, by id: a second with the same id is refused. */
  running: RunningRequests;
}

/**
 * Serves MCP over Streamable HTTP at `/mcp`, one MCP session per client
 * (`Mcp-Session-Id`), each with its own ServeSession (its own sandbox).
 * Requests pass the Host/Origin/token guard first; binding anything but a
 * loopback address without a token is refused.
 */
export function serveHttp<Caller = unknown>(options: ServeHttpOptions<Caller>): Promise<RunningHttpServer<Caller>> {
  return McpHttpServer.listen(options);
}

/**
 * The server behind serveHttp: its sessions, the request handling that
 * routes to them, and the sweeper that closes idle ones.
 */
class McpHttpServer<Caller> implements RunningHttpServer<Caller> {
  readonly #options: ServeHttpOptions<Caller>;
  readonly #http: Server;
  readonly #sessions = new Map<string, SessionEntry<Caller>>();
  readonly #ended = new EndedSessions<Caller>();
  readonly #maxSessions: number;
  readonly #idleMs: number;
  readonly #abandonedMs: number;
  readonly #log: (message: string) => void;
  #guard: ((req: IncomingMessage) => Refusal | undefined) | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  #closing = false;
  #url = '';
  #port = 0;

  /** Checks the options, binds, and starts the sweeper. */
  static async listen<Caller>(options: ServeHttpOptions<Caller>): Promise<McpHttpServer<Caller>> {
    const { host } = parseOptions(serveHttpOptionsSchema, options, 'serveHttp');
    if (!isLoopbackHost(host) && options.token === undefined && options.authenticate === undefined) {
      throw new ToolcellError(ToolErrorType.TOKEN_REQUIRED, `Serving on ${host} (not a loopback address) requires a bearer token (--token).`);
    }
    const server = new McpHttpServer(options);
    await server.#bind(host);
    return server;
  }

  private constructor(options: ServeHttpOptions<Caller>) {
    this.#options = options;
    this.#maxSessions = options.maxSessions ?? 16;
    this.#idleMs = options.sessionIdleMs ?? 30 * 60_000;
    this.#abandonedMs = options.sessionAbandonedMs ?? 2 * 60_000;
    this.#log = options.onLog ?? (() => {});
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.#handle(req, res).catch((error: unknown) => {
        this.#log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
        if (!res.headersSent) sendError(res, 500, -32603, 'Internal server error');
        else res.end();
      });
    };
    this.#http = options.createListener ? options.createListener(handler) : createServer(handler);
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

  listSessions(): Array<LiveHttpSession<Caller>> {
    return [...this.#sessions].map(([id, entry]) => live(id, entry));
  }

  closeSession(id: string, reason: HttpSessionCloseReason): Promise<boolean> {
    return this.#closeSession(id, reason);
  }

  async close(options: { drainMs?: number } = {}): Promise<void> {
    this.#closing = true;
    const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
    await this.#drain(options.drainMs ?? 0);
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.keys()].map((id) => this.#closeSession(id, 'shutdown')));
    this.#http.closeAllConnections();
    await closed;
  }

  /** Waits until no call is running (no POST response open) or `ms` passed. */
  async #drain(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    const busy = () => [...this.#sessions.values()].some((entry) => entry.openResponses > 0);
    while (busy() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, Math.min(100, Math.max(1, deadline - Date.now()))));
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
    this.#sweeper = setInterval(() => this.#sweep(), this.#options.sweepIntervalMs ?? Math.min(this.#idleMs, this.#abandonedMs, 10_000));
    this.#sweeper.unref();
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${this.#port}${MCP_HTTP_PATH}`;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.#sessions) {
      const { maxLifetimeMs } = entry.session;
      if (maxLifetimeMs !== undefined && now - entry.openedAt >= maxLifetimeMs) void this.#closeSession(id, 'max_lifetime');
      else {
        const reason = inactivityReason(entry, now);
        if (reason) void this.#closeSession(id, reason);
      }
    }
  }

  async #closeSession(id: string, reason: HttpSessionCloseReason): Promise<boolean> {
    const entry = this.#sessions.get(id);
    if (!entry) return false;
    this.#sessions.delete(id);
    const why = endedBecause(reason, entry);
    if (reason !== 'shutdown') this.#ended.remember(id, entry.caller, why);
    if (reason === 'idle' || reason === 'abandoned' || reason === 'max_lifetime') {
      // On the standalone SSE stream if the client keeps one open (the SDK drops it otherwise): the client learns why before its next request fails.
      await entry.server.sendLoggingMessage({ level: 'warning', logger: 'toolcell', data: `The session ${why}.` }, id).catch(() => {});
    }
    await answerRunningRequests(entry, why);
    await entry.transport.close().catch(() => {});
    await entry.session.close().catch((error: unknown) => this.#log(`closing session ${id}: ${String(error)}`));
    this.#options.onSessionClose?.(live(id, entry), reason);
    return true;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const other = path === MCP_HTTP_PATH ? undefined : this.#options.otherPaths?.(req);
    if (path !== MCP_HTTP_PATH && !other) return sendError(res, 404, -32000, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    const refusal = this.#guard ? this.#guard(req) : { status: 503, message: 'Server is starting' };
    if (refusal) {
      if (refusal.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, refusal.status, -32000, refusal.message);
    }
    if (other) return other(req, res);
    if (this.#closing) return sendError(res, 503, -32000, 'Server is shutting down');
    let caller: Caller | undefined;
    if (this.#options.authenticate) {
      const admission = await this.#options.authenticate(req);
      if ('refusal' in admission) return sendRefusal(res, admission.refusal);
      caller = admission.caller;
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const entry = this.#sessions.get(sessionId);
      const owned = entry !== undefined && (this.#options.sameOwner === undefined || this.#options.sameOwner(entry.caller as Caller, caller as Caller));
      // Another caller's session answers exactly as an unknown one: its id alone must reveal nothing.
      if (!entry || !owned) return this.#sessionNotFound(res, sessionId, caller);
      if (req.method === 'DELETE') {
        // Answered once the session is gone, container and quota included, so a client that opens
        // its next session right after is not refused for the one it just ended.
        await this.#closeSession(sessionId, 'client');
        return void res.writeHead(200).end();
      }
      if (req.method !== 'POST') {
        track(entry, req, res);
        return entry.transport.handleRequest(req, res);
      }
      // Read here, not by the SDK, so that every body is bounded the same way (json-shape.ts) before it is parsed.
      const read = await this.#readBody(req, res, caller);
      if ('refusal' in read) return sendRefusal(res, read.refusal);
      const { body } = read;
      const clash = entry.running.claim(requestIds(body), res);
      if (clash !== undefined)
        return sendError(
          res,
          400,
          -32600,
          `Invalid Request: a request with id ${JSON.stringify(clash)} is still being answered in this session; each request the client has outstanding needs an id of its own`,
        );
      const refused = this.#options.admitMessage?.(caller, body, res);
      if (refused) return sendRefusal(res, refused);
      track(entry, req, res);
      return entry.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST') return sendError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header; start a session with an initialize request');
    const read = await this.#readBody(req, res, caller);
    if ('refusal' in read) return sendRefusal(res, read.refusal);
    const { body } = read;
    if (!isInitializeRequest(body)) return sendError(res, 400, -32000, 'Bad Request: no valid session ID provided');
    if (this.#sessions.size >= this.#maxSessions) return sendError(res, 503, -32000, `Too many sessions (at most ${this.#maxSessions})`);
    return this.#openSession(req, res, body, caller);
  }

  async #readBody(req: IncomingMessage, res: ServerResponse, caller: Caller | undefined): Promise<{ body: unknown } | { refusal: HttpRefusal }> {
    if (this.#options.readBody) return this.#options.readBody(req, res, caller);
    const body = await readJsonBody(req);
    return body === undefined
      ? {
          refusal: {
            status: 400,
            message: `Parse error: the body must be JSON of at most 4 MB, ${DEFAULT_MAX_BODY_VALUES} values and ${DEFAULT_MAX_BODY_DEPTH} levels of nesting`,
            code: -32700,
          },
        }
      : { body };
  }

  /**
   * 404 for a session id that is not live. The owner of a session that ended
   * lately learns why; anyone else gets exactly what an unknown id gets.
   */
  #sessionNotFound(res: ServerResponse, id: string, caller: Caller | undefined): void {
    const ended = this.#ended.get(id);
    const owned = ended !== undefined && (this.#options.sameOwner === undefined || this.#options.sameOwner(ended.caller as Caller, caller as Caller));
    if (!owned) return sendError(res, 404, -32001, 'Session not found');
    const error = sessionEndedError(`Session not found: the session ${ended.why}`);
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error, id: null }));
  }

  async #openSession(req: IncomingMessage, res: ServerResponse, body: unknown, caller: Caller | undefined): Promise<void> {
    const id = `${this.#options.sessionIdPrefix ?? ''}${randomUUID()}`;
    // A client that goes away before the answer never learns the session's id: nobody could use
    // the session, so its sandbox must not wait for the idle timeout. Closed as soon as it exists.
    let gone = false;
    let entry: SessionEntry<Caller> | undefined;
    res.once('close', () => {
      if (res.writableFinished) return;
      gone = true;
      if (entry && this.#sessions.get(id) === entry) void this.#closeSession(id, 'client');
    });
    let session: ServeSession;
    try {
      session = await this.#options.createSession(id, caller);
    } catch (error) {
      if (error instanceof SessionRefusal) return sendRefusal(res, error.refusal);
      this.#log(`could not open session: ${error instanceof Error ? error.message : String(error)}`);
      return sendError(res, 500, -32603, `Could not open a session: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (gone) {
      await session.close().catch((error: unknown) => this.#log(`closing session ${id}: ${String(error)}`));
      return;
    }
    const now = Date.now();
    const opened: SessionEntry<Caller> = {
      transport: undefined as unknown as StreamableHTTPServerTransport,
      server: undefined as unknown as McpServer,
      session,
      caller,
      openedAt: now,
      calls: 0,
      lastActivity: now,
      idleMs: session.idleMs ?? this.#idleMs,
      abandonedMs: session.abandonedMs ?? this.#abandonedMs,
      openResponses: 0,
      openStreams: 0,
      running: new RunningRequests(),
    };
    entry = opened;
    // Large answers (an image read_file gives) are encoded off the event loop, which serves every session.
    const transport = new OffThreadSseTransport({
      transport: {
        sessionIdGenerator: () => id,
        onsessioninitialized: (sessionId) => {
          this.#sessions.set(sessionId, opened);
          this.#options.onSessionOpen?.(live(sessionId, opened));
        },
      },
      encodeThread: sharedJsonEncodeThread(),
      budget: session.budget,
    });
    opened.transport = transport;
    transport.onclose = () => void this.#closeSession(id, 'client');
    const aroundCall: AroundToolCall = (call, run) => {
      opened.calls++;
      return session.aroundCall ? session.aroundCall(call, run) : run().then((done) => done.result);
    };
    const server = createToolServer({
      registry: session.registry,
      ...(session.scheduler ? { scheduler: session.scheduler } : {}),
      createScheduler: this.#options.createScheduler,
      aroundCall,
    });
    entry.server = server;
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (gone && this.#sessions.get(id) === opened) {
      await this.#closeSession(id, 'client');
    } else if (!this.#sessions.has(id)) {
      // Initialization failed (e.g. a bad protocol version): nothing to keep.
      await transport.close().catch(() => {});
      await session.close().catch(() => {});
    }
  }
}

/** How many ended session ids are remembered (oldest forgotten first): enough for a burst of timeouts, bounded in memory. */
const ENDED_SESSIONS_KEPT = 4096;

/** Recently ended sessions: who owned each and why it ended. */
class EndedSessions<Caller> {
  readonly #entries = new Map<string, { caller: Caller | undefined; why: string }>();

  remember(id: string, caller: Caller | undefined, why: string): void {
    this.#entries.set(id, { caller, why });
    if (this.#entries.size > ENDED_SESSIONS_KEPT) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get(id: string): { caller: Caller | undefined; why: string } | undefined {
    return this.#entries.get(id);
  }
}

/** The JSON-RPC error of a request whose session has ended (closed while it ran, or before it came). */
function sessionEndedError(message: string): { code: number; message: string; data: { type: 'session_ended' } } {
  return { code: -32001, message, data: { type: 'session_ended' } };
}

/**
 * Answers every request of a closing session that is still running with a
 * `session_ended` error (its call is stopped right after, with the session).
 * Closing the transport alone ends a request's event stream with no answer,
 * and the SDK's client then waits out its request timeout (60 s by default,
 * as long as a caller set for a long call) for an answer that cannot come.
 */
async function answerRunningRequests(entry: SessionEntry<unknown>, why: string): Promise<void> {
  const error = sessionEndedError(`The session ${why}: this request was stopped.`);
  // A request that finishes meanwhile has its stream gone: send throws, and its own answer went out.
  await Promise.all(entry.running.ids().map((id) => entry.transport.send({ jsonrpc: '2.0', id, error }).catch(() => {})));
}

/** The end of "The session …": why it closed, in the words of the limit that closed it. */
function endedBecause(reason: HttpSessionCloseReason, entry: SessionEntry<unknown>): string {
  const seconds = (ms: number | undefined) => Math.round((ms ?? 0) / 1000);
  switch (reason) {
    case 'max_lifetime':
      return `reached its limit maxSessionSeconds (${seconds(entry.session.maxLifetimeMs)} s) and was closed`;
    case 'idle':
      return `reached its limit idleSeconds (${seconds(entry.idleMs)} s without a request) and was closed`;
    case 'abandoned':
      return `reached its limit abandonedSeconds (${seconds(entry.abandonedMs)} s without a request or an open event stream: its client seems gone) and was closed`;
    case 'tenant':
      return 'was closed by its tenant (DELETE /sessions/<id>)';
    case 'client':
      return 'was ended by the client';
    case 'key_revoked':
      return 'was closed because the API key that opened it was revoked';
    case 'tenant_removed':
      return 'was closed because its tenant was removed';
    case 'tenant_moved':
      return 'was closed because its tenant moved to another node (open a new session)';
    case 'admin':
      return 'was closed by an operator';
    case 'shutdown':
      return 'was closed because the server is shutting down';
    default:
      return `was closed (${reason})`;
  }
}

function live<Caller>(id: string, entry: SessionEntry<Caller>): LiveHttpSession<Caller> {
  const now = Date.now();
  return {
    id,
    caller: entry.caller,
    ageMs: now - entry.openedAt,
    calls: entry.calls,
    inactiveMs: entry.openResponses > 0 ? 0 : now - entry.lastActivity,
    streamOpen: entry.openStreams > 0,
  };
}

/**
 * Why an inactive session is to be closed now, if it is: with no call
 * running, `idle` after idleMs without a request, `abandoned` after
 * abandonedMs without a request and without an event stream; when both
 * have passed, the one with the shorter limit (it was crossed first).
 */
function inactivityReason(entry: SessionEntry<unknown>, now: number): 'idle' | 'abandoned' | undefined {
  if (entry.openResponses > 0) return undefined;
  const inactive = now - entry.lastActivity;
  const abandoned = entry.openStreams === 0 && inactive > entry.abandonedMs;
  const idle = inactive > entry.idleMs;
  if (abandoned && (!idle || entry.abandonedMs <= entry.idleMs)) return 'abandoned';
  return idle ? 'idle' : undefined;
}

/**
 * Activity is a request's start and end. A POST counts as open until its
 * response closes (a call may run for long). A GET (the client's standing
 * event stream) shows the client is there, so the session is not abandoned
 * while it is open, but it does not keep the session from being idle, or a
 * forgotten client would hold its sandbox forever.
 */
function track(entry: SessionEntry<unknown>, req: IncomingMessage, res: ServerResponse): void {
  entry.lastActivity = Date.now();
  if (req.method !== 'POST' && req.method !== 'GET') return;
  const open = req.method === 'POST' ? 'openResponses' : 'openStreams';
  entry[open]++;
  res.once('close', () => {
    entry[open]--;
    entry.lastActivity = Date.now();
  });
}
