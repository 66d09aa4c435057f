/**
 * Local HTTP and HTTPS servers that stand in for the internet in egress
 * tests (nothing outside this machine is reachable): each answers every
 * request with `hello from <name>` and counts what it served. The HTTPS
 * server's certificate is self-signed for the names given, made with openssl.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestWebServer {
  port: number;
  /** Requests served so far. */
  hits: number;
  close(): Promise<void>;
}

function selfSignedCertificate(names: readonly string[]): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-tls-'));
  try {
    const san = names.map((name) => (/^[\d.]+$/.test(name) ? `IP:${name}` : `DNS:${name}`)).join(',');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${names[0]}`,
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function listen(server: Server, host: string, name: string): Promise<TestWebServer> {
  const state = { hits: 0 };
  server.on('request', (_req, res) => {
    state.hits += 1;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${name}\n`);
  });
  await new Promise<void>((resolve) => server.listen({ host, port: 0 }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get hits() {
      return state.hits;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A plain HTTP server on `host` (any free port). */
export function startHttpServer(options: { host: string; name: string }): Promise<TestWebServer> {
  return listen(createHttpServer(), options.host, options.name);
}

/** An HTTPS server on `host` whose certificate names `names`; the certificate's PEM is returned for clients to trust. */
export async function startHttpsServer(options: { host: string; name: string; names: readonly string[] }): Promise<TestWebServer & { cert: string }> {
  const tls = selfSignedCertificate(options.names);
  const server = await listen(createHttpsServer(tls) as unknown as Server, options.host, options.name);
  return Object.assign(server, { cert: tls.cert });
}
