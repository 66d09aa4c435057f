import test from 'ava';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { createHostingHttpServer, type HostingHttpServerOptions } from '../../src/hosting/http/hosting-http-server.js';
import { readBody } from '../../src/hosting/http/read-body.js';
import { sendJson } from '../../src/hosting/http/request-handler.js';
import { hasOpenssl, makeSelfSignedCertificate } from '../helpers/tls.js';

async function listen(t: { teardown(fn: () => void): void }, options: HostingHttpServerOptions): Promise<number> {
  return (await listenServer(t, options)).port;
}

async function listenServer(t: { teardown(fn: () => void): void }, options: HostingHttpServerOptions): Promise<{ server: Server; port: number }> {
  const server = createHostingHttpServer(options) as Server;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { server, port: (server.address() as AddressInfo).port };
}

const echoLength = async (req: Parameters<HostingHttpServerOptions['handler']>[0], res: Parameters<HostingHttpServerOptions['handler']>[1]) =>
  sendJson(res, 200, { bytes: (await readBody(req, 1000)).length });

/**
 * Opens a raw connection, sends `head`, then one byte of `trickle` every
 * 200 ms until the server closes the connection; resolves to what the
 * server sent. A slowloris client, by hand.
 */
function trickle(port: number, head: string, trickleText: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let index = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => {}); // a reset is one way to be cut off
    socket.on('close', () => {
      clearInterval(timer);
      resolve(received);
    });
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(trickleText[index++ % trickleText.length]!);
      }, 200);
    });
    // Backstop only: a server that never cuts the client off fails here, not by a duration.
    setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      reject(new Error('the server never closed the trickling connection'));
    }, 60_000).unref();
  });
}

test('a client trickling its headers is cut off with 408', async (t) => {
  const port = await listen(t, { handler: echoLength, limits: { headersTimeoutMs: 1000, requestTimeoutMs: 2000, checkIntervalMs: 100 } });
  const received = await trickle(port, 'GET / HTTP/1.1\r\nHost: x\r\n', 'X-Slow: aaaaaaaaaaaaaaaa\r\n');
  t.regex(received, /^HTTP\/1\.1 408/);
});

test('a client trickling its body is cut off by the request timeout', async (t) => {
  const port = await listen(t, { handler: echoLength, limits: { headersTimeoutMs: 1000, requestTimeoutMs: 2000, checkIntervalMs: 100 } });
  const received = await trickle(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n', 'b');
  // The handler already has the request, so there is no status to send: the connection is closed.
  t.notRegex(received, /^HTTP\/1\.1 200/);
});

/** Sockets the server holds open now. */
function openConnections(server: Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

test('a client that never reads the answer and never closes does not keep its connection: after a 408, 431, 413 or an idle keep-alive, the server lets the socket go', async (t) => {
  const { server, port } = await listenServer(t, {
    handler: echoLength,
    limits: { headersTimeoutMs: 500, requestTimeoutMs: 1000, keepAliveTimeoutMs: 1000, maxHeaderSize: 2048, checkIntervalMs: 100 },
  });
  // Each sends its bytes and then neither reads nor closes: what a slowloris client does once it has been answered.
  const heads = {
    'nothing at all (408)': '',
    'half its headers (408)': 'POST /mcp HTTP/1.1\r\nHost: x\r\n',
    'headers over the size (431)': `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4000)}\r\n\r\n`,
    'a body over the limit (413)': 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n',
    'one answered request, then idle': 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
  };
  let accepted = 0;
  server.on('connection', () => accepted++);
  const sockets = Object.values(heads).map((head) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.on('error', () => {});
    socket.pause(); // never reads: the server's answer and its FIN stay unread
    if (head !== '') socket.write(head);
    return socket;
  });
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));
  const sleep = () => new Promise((resolve) => setTimeout(resolve, 100));
  // Backstops only: a server that keeps any of them fails here, not by a duration.
  for (let waited = 0; waited < 10_000 && accepted < sockets.length; waited += 100) await sleep();
  t.is(accepted, sockets.length);
  for (let waited = 0; waited < 60_000 && (await openConnections(server)) > 0; waited += 100) await sleep();
  t.is(await openConnections(server), 0, 'every socket the server answered and ended is closed on its side, though the client never closed');
});

const LARGE_ANSWER = 32 * 1024 * 1024;
/** Answers every request with LARGE_ANSWER bytes in one write, as the MCP SDK writes a tool's result. */
const largeAnswer: HostingHttpServerOptions['handler'] = (_req, res) => void res.end(Buffer.alloc(LARGE_ANSWER, 'x'));

/** Resolves once `server` has no connection left (backstop only: a server that keeps one fails here, not by a duration). */
async function untilNoConnections(server: Server, backstopMs = 60_000): Promise<number> {
  for (let waited = 0; waited < backstopMs && (await openConnections(server)) > 0; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  return openConnections(server);
}

test('a client that stops reading a large answer has its connection reset, freeing what waited for it; one that reads slowly but steadily gets all of it', async (t) => {
  const { server, port } = await listenServer(t, { handler: largeAnswer, limits: { writeStallMs: 1000, checkIntervalMs: 100 } });
  const stalled = connect({ port, host: '127.0.0.1' });
  stalled.on('error', () => {});
  stalled.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  stalled.pause(); // takes what the kernel holds for it, then nothing
  t.teardown(() => stalled.destroy());
  await once(server, 'request');
  t.is(await untilNoConnections(server), 0, 'the server let go of the connection whose client stopped reading');

  // About 6 MB/s, in bursts: its answer takes several windows of writeStallMs, and output waits throughout.
  const steady = connect({ port, host: '127.0.0.1' });
  t.teardown(() => steady.destroy());
  const received = await new Promise<number>((resolve, reject) => {
    let bytes = 0;
    steady.on('error', reject);
    steady.on('close', () => resolve(bytes));
    steady.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes >= LARGE_ANSWER) return resolve(bytes);
      steady.pause();
      setTimeout(() => steady.resume(), 10);
    });
    steady.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  });
  t.true(received >= LARGE_ANSWER, `received ${received} of ${LARGE_ANSWER}`);
});

test('headers over maxHeaderSize get 431', async (t) => {
  const port = await listen(t, { handler: echoLength, limits: { maxHeaderSize: 2048 } });
  const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'X-Big': 'a'.repeat(4000) } });
  t.is(response.status, 431);
});

test('a body over the limit gets 413 by Content-Length and when sent chunked; one within it is read', async (t) => {
  const port = await listen(t, { handler: echoLength });
  const url = `http://127.0.0.1:${port}/`;
  t.deepEqual(await (await fetch(url, { method: 'POST', body: 'a'.repeat(1000) })).json(), { bytes: 1000 });
  const declared = await fetch(url, { method: 'POST', body: 'a'.repeat(1001) });
  t.is(declared.status, 413);
  t.is(((await declared.json()) as { error: string }).error, 'request_too_large');
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('c'.repeat(100)));
      controller.close();
    },
  });
  const chunked = await fetch(url, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
  t.is(chunked.status, 413);
});

test('a handler that throws gets a 500, and the server goes on serving', async (t) => {
  const errors: unknown[] = [];
  let calls = 0;
  const port = await listen(t, {
    handler: (_req, res) => {
      if (calls++ === 0) throw new Error('boom');
      sendJson(res, 200, { ok: true });
    },
    onError: (error) => errors.push(error),
  });
  t.is((await fetch(`http://127.0.0.1:${port}/`)).status, 500);
  t.is((await fetch(`http://127.0.0.1:${port}/`)).status, 200);
  t.is(errors.length, 1);
});

test('headersTimeoutMs over requestTimeoutMs is refused, naming the option', (t) => {
  t.throws(() => createHostingHttpServer({ handler: () => {}, limits: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 } }), {
    message: /options\.limits/,
  });
});

test('unreadable TLS files are refused with invalid_input naming the file', (t) => {
  const error = t.throws(() => createHostingHttpServer({ handler: () => {}, tls: { certFile: '/nonexistent/cert.pem', keyFile: '/nonexistent/key.pem' } }));
  t.is((error as { code?: string }).code, 'invalid_input');
  t.regex(error!.message, /\/nonexistent\/cert\.pem/);
});

const tlsTest = hasOpenssl() || process.env['CI'] === 'true' ? test : test.skip;
if (!hasOpenssl() && process.env['CI'] !== 'true') console.warn('hosting-http-server: TLS test skipped: openssl is not installed');

/** A self-signed certificate and its key in a folder of their own, removed at teardown. */
async function selfSignedPair(t: { teardown(fn: () => Promise<void>): void }): Promise<{ certFile: string; keyFile: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-tls-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const pair = { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') };
  makeSelfSignedCertificate(pair.certFile, pair.keyFile);
  return pair;
}

tlsTest('TLS: a self-signed certificate made here serves HTTPS to a client that trusts it, and only to one', async (t) => {
  const { certFile, keyFile } = await selfSignedPair(t);
  const port = await listen(t, {
    handler: (req, res) => sendJson(res, 200, { secure: (req.socket as { encrypted?: boolean }).encrypted === true }),
    tls: { certFile, keyFile },
  });
  const get = (ca?: Buffer) =>
    new Promise<string>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port, path: '/', ...(ca ? { ca } : {}) }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });
  t.deepEqual(JSON.parse(await get(readFileSync(certFile))), { secure: true });
  await t.throwsAsync(get(), { message: /self[- ]signed/i });
});

tlsTest('TLS: a client that stops reading a large answer has its connection closed', async (t) => {
  const { certFile, keyFile } = await selfSignedPair(t);
  const { server, port } = await listenServer(t, { handler: largeAnswer, tls: { certFile, keyFile }, limits: { writeStallMs: 1000, checkIntervalMs: 100 } });
  const stalled = tlsConnect({ port, host: '127.0.0.1', ca: readFileSync(certFile) });
  stalled.on('error', () => {});
  t.teardown(() => stalled.destroy());
  await once(stalled, 'secureConnect');
  stalled.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  stalled.pause();
  await once(server, 'request');
  t.is(await untilNoConnections(server), 0);
});

test('a large chunked body over the limit still gets its 413 answer, not a reset', async (t) => {
  const port = await listen(t, { handler: echoLength });
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 'd');
    let sent = 0;
    const pump = (): void => {
      while (sent < 80 && req.write(chunk)) sent++;
      if (sent < 80) req.once('drain', pump);
      else req.end();
    };
    pump();
  });
  t.is(status, 413);
});
