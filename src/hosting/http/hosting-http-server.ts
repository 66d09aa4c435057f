import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../contracts/parse-options.js';
import { ToolcellError, ToolErrorType, errorMessage, isToolcellError } from '../../errors.js';
import { sendJson, type RequestHandler } from './request-handler.js';
import { resetStalledWrites } from './stalled-writes.js';

/**
 * Limits for a server facing the internet, each against one way to hold a
 * connection or memory without doing work (slowloris and its kin). Node's
 * own defaults (60 s for headers, 300 s for a request, and a check every
 * 30 s) let a few thousand trickling clients hold every socket for minutes.
 */
const LimitsSchema = z.strictObject({
  /** All request headers must arrive within this; a client trickling them is cut off (408). Over TLS, the handshake too. */
  headersTimeoutMs: integerOption(100, 10_000),
  /** The whole request (headers and body) must arrive within this. Responses (a long call's stream) are not limited. */
  requestTimeoutMs: integerOption(100, 30_000),
  /**
   * An idle keep-alive connection is closed after this, as the `Keep-Alive:
   * timeout=` header tells clients; the server itself waits KEEP_ALIVE_GRACE_MS
   * longer (see there).
   */
  keepAliveTimeoutMs: integerOption(1000, 5_000),
  /** Total size of the request line and headers; over it the answer is 431. */
  maxHeaderSize: integerOption(1024, 16 * 1024, 1024 * 1024),
  /**
   * While a response's output waits in the server, its client must take at
   * least 16 KiB a second of it over each window this long, or the
   * connection is reset (stalled-writes.ts): a client that stops reading
   * holds neither the memory nor the socket.
   */
  writeStallMs: integerOption(1000, 30_000),
  /** How often Node checks the two timeouts above, and the server checks for stalled writes; the cut-off lands within this after them. */
  checkIntervalMs: integerOption(50, 1_000),
});

const HostingHttpServerOptionsSchema = z.strictObject({
  handler: z.custom<RequestHandler>((value) => typeof value === 'function', { error: 'must be a function' }),
  /** Serve HTTPS with this PEM certificate (chain) and key; without it, plain HTTP (behind a TLS proxy, or on loopback). */
  tls: z
    .strictObject({
      certFile: z.string().min(1),
      keyFile: z.string().min(1),
      /**
       * Ask clients for a certificate without requiring one (a cluster node:
       * the other nodes present theirs, cluster/workspace-transfer.ts checks
       * it; MCP clients without one connect as before). Default false.
       */
      requestCert: z.boolean().optional(),
    })
    .optional(),
  limits: LimitsSchema.prefault({}).refine((limits) => limits.headersTimeoutMs <= limits.requestTimeoutMs, {
    error: 'must have headersTimeoutMs at most requestTimeoutMs',
  }),
  /** A handler that threw (after a 500 was sent). */
  onError: z.custom<(error: unknown) => void>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
});

export type HostingHttpServerOptions = z.input<typeof HostingHttpServerOptionsSchema>;

/**
 * How much longer the server keeps an idle keep-alive connection than it
 * tells clients. A client reuses an idle connection until the advertised
 * timeout (undici, Node's fetch: the advertised one less 1 s); a server that
 * closes at that same moment races a request sent just then, which fails
 * with `fetch failed` (other side closed, ECONNRESET: a POST is not retried).
 * Under load the client's and server's timers slip by seconds, and 100
 * sessions opened at once lost 13 such requests. Node 24 has this as
 * `keepAliveTimeoutBuffer`; Node 20 sends the header from the response's
 * `_keepAliveTimeout`, set per response below.
 */
export const KEEP_ALIVE_GRACE_MS = 10_000;
export type HostingHttpLimits = z.input<typeof LimitsSchema>;

/**
 * An HTTP or HTTPS server (not yet listening) that runs `handler` with the
 * hygiene an exposed server needs: header, request and keep-alive timeouts,
 * connections reset whose client stops reading, a header size cap, and a handler failure answered with a 500 (or 413 for
 * `request_too_large` from `readBody`) instead of a hung request. TLS files
 * that cannot be read throw `invalid_input` naming the file.
 */
export function createHostingHttpServer(options: HostingHttpServerOptions): HttpServer | HttpsServer {
  const parsed = parseOptions(HostingHttpServerOptionsSchema, options, 'createHostingHttpServer');
  const { limits } = parsed;
  const common = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs + KEEP_ALIVE_GRACE_MS,
    maxHeaderSize: limits.maxHeaderSize,
    connectionsCheckingInterval: limits.checkIntervalMs,
  };
  const listener = wrap(parsed.handler, parsed.onError ?? (() => {}), limits.keepAliveTimeoutMs);
  const server = parsed.tls
    ? createHttpsServer(
        {
          ...common,
          cert: readPem(parsed.tls.certFile, 'certificate'),
          key: readPem(parsed.tls.keyFile, 'key'),
          minVersion: 'TLSv1.2',
          // A connection that never finishes its handshake is cut off as one that never finishes its headers (Node: 120 s).
          handshakeTimeout: limits.headersTimeoutMs,
          ...(parsed.tls.requestCert ? { requestCert: true, rejectUnauthorized: false } : {}),
        },
        listener,
      )
    : createHttpServer(common, listener);
  // The keep-alive timeout is applied after construction too: older Node releases read it only from the property.
  server.keepAliveTimeout = limits.keepAliveTimeoutMs + KEEP_ALIVE_GRACE_MS;
  server.on('clientError', answerClientError);
  resetStalledWrites(server, { stallMs: limits.writeStallMs, checkIntervalMs: limits.checkIntervalMs });
  return server;
}

/**
 * A request cut off before it reached the handler. Node 20's own answer is a
 * bare 400 for all of these; a client (or its operator) is better served by
 * the status that says which limit it hit.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
  const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? '400 Bad Request';
  // Closed once the answer is handed to the kernel, not when the client closes its side: `end` alone
  // waits for that (the server's sockets are half-open), and a slowloris client that never reads
  // kept every socket it was answered on, each a file descriptor, for good. The timer is for an
  // answer that cannot even be handed over (a send buffer the client keeps full).
  const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_GRACE_MS).unref();
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => {
    clearTimeout(timer);
    socket.destroy();
  });
}

/** The longest a socket answered with a client error waits for its answer to be written out. */
const CLIENT_ERROR_GRACE_MS = 5_000;

const CLIENT_ERROR_STATUS: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
};

function wrap(handler: RequestHandler, onError: (error: unknown) => void, advertisedKeepAliveMs: number): RequestHandler {
  return (req, res) => {
    // The header clients read (`Keep-Alive: timeout=`): the server's own idle timeout less the grace.
    (res as typeof res & { _keepAliveTimeout?: number })._keepAliveTimeout = advertisedKeepAliveMs;
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((error: unknown) => {
        const tooLarge = isToolcellError(error) && error.code === ToolErrorType.REQUEST_TOO_LARGE;
        if (!tooLarge) onError(error);
        if (res.headersSent) return void res.end();
        if (tooLarge) return sendJson(res, 413, { error: error.code, message: error.message }, { Connection: 'close' });
        sendJson(res, 500, { error: 'internal_error' });
      });
  };
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, `Cannot read the TLS ${what} ${path}: ${errorMessage(error)}`, { cause: error });
  }
}
