import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type EgressDecision, EgressGate, type EgressGateOptions } from './egress-gate.js';
import { egressEventOf, type EgressEvent } from './egress-event.js';
import { RefusalLog } from './refusal-log.js';

export interface EgressProxyOptions extends EgressGateOptions {
  /** Address to listen on: the sandbox network's gateway, never 0.0.0.0 in use. */
  host: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Every allowed and refused connection (the audit log's `egress` events). */
  onEvent?: (event: EgressEvent) => void;
  /** A tunnel or request idle this long is closed. Default 120 s. */
  idleTimeoutMs?: number;
  /**
   * Connections from sandboxes open at once; past it a new one is closed as
   * it is accepted. Default DEFAULT_MAX_PROXY_CONNECTIONS.
   */
  maxConnections?: number;
}

/**
 * The proxy runs in the server's process, so each connection a sandbox opens
 * to it (and each tunnel's upstream) is one of the server's file
 * descriptors: without a cap, one tenant's commands could open them until
 * the server could open no file and accept no connection for anyone. Far
 * more than package managers open in parallel.
 */
export const DEFAULT_MAX_PROXY_CONNECTIONS = 256;

// Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own: never forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** `host:port` of a CONNECT request (IPv6 in brackets); undefined if malformed. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/@\s]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  return { host: match[1] ?? match[2]!, port: Number(match[3]) };
}

/**
 * The sandbox's only way out: an HTTP proxy (CONNECT for HTTPS, absolute-form
 * plain HTTP forwarded) that lets through what `EgressGate` allows, connects
 * to the address it checked, and remembers refusals per sandbox so a call can
 * say why its client failed. It never reads or changes a tunnel's bytes.
 */
export class EgressProxy {
  readonly #gate: EgressGate;
  readonly #server: Server;
  readonly #options: EgressProxyOptions;
  readonly #sockets = new Set<Duplex>();
  readonly refusals = new RefusalLog();

  private constructor(options: EgressProxyOptions) {
    this.#options = options;
    this.#gate = new EgressGate(options);
    this.#server = createServer({ requestTimeout: 30_000, headersTimeout: 15_000 }, (req, res) => void this.#forward(req, res));
    this.#server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.#tunnel(req, socket, head));
    this.#server.on('connection', (socket: Socket) => this.#track(socket));
    this.#server.maxConnections = options.maxConnections ?? DEFAULT_MAX_PROXY_CONNECTIONS;
  }

  static async start(options: EgressProxyOptions): Promise<EgressProxy> {
    const proxy = new EgressProxy(options);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen({ host: options.host, port: options.port ?? 0 }, () => resolve());
    });
    return proxy;
  }

  /** Where sandboxes reach the proxy: `http://host:port`. */
  get url(): string {
    const { address, port } = this.#server.address() as AddressInfo;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Stops listening and cuts every open tunnel. */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    if ('setTimeout' in socket) (socket as Socket).setTimeout(this.#options.idleTimeoutMs ?? 120_000, () => socket.destroy());
  }

  #report(client: string, via: EgressEvent['via'], decision: EgressDecision): void {
    const event = egressEventOf(decision, client, via);
    if (!decision.allowed) this.refusals.record(event);
    this.#options.onEvent?.(event);
  }

  async #tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const from = req.socket.remoteAddress ?? 'unknown';
    client.on('error', () => client.destroy());
    const target = parseAuthority(req.url ?? '');
    if (!target) return void client.end('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nCONNECT needs host:port\n');
    const decision = await this.#gate.decide(target.host, target.port);
    this.#report(from, 'connect', decision);
    if (!decision.allowed) {
      return void client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\nX-Toolcell-Egress: refused\r\n\r\ntoolcell egress proxy: refused ${target.host}:${target.port}, ${decision.reason}\n`,
      );
    }
    const upstream = connect({ host: decision.address, port: decision.port });
    this.#track(upstream);
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (!client.writableEnded && upstream.bytesRead === 0 && upstream.bytesWritten === 0) {
        client.end(
          `HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\ntoolcell egress proxy: ${target.host}:${target.port} (${decision.address}) failed: ${error.code ?? error.message}\n`,
        );
      } else client.destroy();
    });
    client.on('close', () => upstream.destroy());
  }

  async #forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const from = req.socket.remoteAddress ?? 'unknown';
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('toolcell egress proxy: only absolute http:// URLs are forwarded\n');
    }
    if (url.protocol !== 'http:') {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end(`toolcell egress proxy: ${url.protocol} URLs go through CONNECT\n`);
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = url.port === '' ? 80 : Number(url.port);
    const decision = await this.#gate.decide(host, port);
    this.#report(from, 'http', decision);
    if (!decision.allowed) {
      return void res
        .writeHead(403, { 'content-type': 'text/plain', 'x-toolcell-egress': 'refused' })
        .end(`toolcell egress proxy: refused ${host}:${port}, ${decision.reason}\n`);
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    const upstream = httpRequest({
      host: decision.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent: false,
    });
    upstream.on('response', (answer) => {
      const back: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (!res.headersSent)
        res
          .writeHead(502, { 'content-type': 'text/plain' })
          .end(`toolcell egress proxy: ${host}:${port} (${decision.address}) failed: ${error.code ?? error.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  }
}
