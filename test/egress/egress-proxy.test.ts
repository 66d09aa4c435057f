import test from 'ava';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { EgressEvent } from '../../src/egress/egress-event.js';
import { EgressProxy } from '../../src/egress/egress-proxy.js';
import { mapResolver } from '../../src/egress/resolver.js';
import { startHttpServer, startHttpsServer, type TestWebServer } from '../helpers/egress-servers.js';

// Upstreams on loopback: loopback is listed by port, so `allowed.test` (which
// resolves to it) passes, while `rebind.test` on an unlisted port shows a
// listed name resolving to 127.0.0.1 being refused.
let web: TestWebServer;
let secure: TestWebServer & { cert: string };
let hidden: TestWebServer;
let proxy: EgressProxy;
const events: EgressEvent[] = [];

test.before(async () => {
  web = await startHttpServer({ host: '127.0.0.1', name: 'web' });
  secure = await startHttpsServer({ host: '127.0.0.1', name: 'secure', names: ['allowed.test'] });
  hidden = await startHttpServer({ host: '127.0.0.1', name: 'hidden' });
  proxy = await EgressProxy.start({
    host: '127.0.0.1',
    allow: [`allowed.test:${web.port}`, `allowed.test:${secure.port}`, `127.0.0.1:${web.port}`, `127.0.0.1:${secure.port}`, `rebind.test:${hidden.port}`],
    resolver: mapResolver({ 'allowed.test': '127.0.0.1', 'rebind.test': '127.0.0.1', 'denied.test': '127.0.0.1' }),
    onEvent: (event) => events.push(event),
  });
});

test.after.always(async () => {
  await proxy?.close();
  await Promise.all([web, secure, hidden].map((server) => server?.close()));
});

/** A plain HTTP GET through the proxy (absolute form), as curl with http_proxy does it. */
function proxiedGet(url: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: proxy.port, method: 'GET', path: url, headers: { host: target.host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
}

/** Opens a CONNECT tunnel; resolves with the proxy's status line and the socket. */
function openTunnel(authority: string): Promise<{ status: string; body: string; socket: import('node:net').Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxy.port, '127.0.0.1', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const status = head.slice(0, head.indexOf('\r\n'));
      if (status.includes(' 200 ')) return resolve({ status, body: '', socket });
      let body = head.slice(end + 4);
      socket.on('data', (more: Buffer) => (body += more.toString('utf8')));
      socket.on('end', () => resolve({ status, body, socket }));
    };
    socket.on('data', onData).on('error', reject);
  });
}

test('plain HTTP to a listed name is forwarded to the address it resolved to', async (t) => {
  const answer = await proxiedGet(`http://allowed.test:${web.port}/index.html`);
  t.is(answer.status, 200);
  t.is(answer.body, 'hello from web\n');
  t.like(
    events.find((event) => event.via === 'http' && event.action === 'allowed'),
    { host: 'allowed.test', port: web.port, address: '127.0.0.1', entry: `allowed.test:${web.port}` },
  );
});

test('HTTPS to a listed name goes through a CONNECT tunnel the proxy does not read', async (t) => {
  const tunnel = await openTunnel(`allowed.test:${secure.port}`);
  t.regex(tunnel.status, /^HTTP\/1\.1 200 /);
  const body = await new Promise<string>((resolve, reject) => {
    const tls = tlsConnect({ socket: tunnel.socket, servername: 'allowed.test', ca: secure.cert }, () =>
      tls.write('GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n'),
    );
    let text = '';
    tls.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    tls.on('end', () => resolve(text)).on('error', reject);
  });
  t.regex(body, /hello from secure/);
});

test('an unlisted name is refused with 403 and the reason, and remembered for the client', async (t) => {
  const since = Date.now();
  const tunnel = await openTunnel(`denied.test:${secure.port}`);
  t.regex(tunnel.status, /^HTTP\/1\.1 403 /);
  t.regex(tunnel.body, /refused denied\.test:\d+, not in sandbox\.network\.allow/);
  const plain = await proxiedGet(`http://denied.test:${web.port}/`);
  t.is(plain.status, 403);
  const refused = proxy.refusals.since('127.0.0.1', since).map((event) => `${event.host}:${event.port}`);
  t.true(refused.includes(`denied.test:${secure.port}`));
  t.true(refused.includes(`denied.test:${web.port}`));
});

test('a listed name resolving to loopback is refused unless the address is listed too', async (t) => {
  const before = hidden.hits;
  const answer = await proxiedGet(`http://rebind.test:${hidden.port}/`);
  t.is(answer.status, 403);
  t.regex(answer.body, /127\.0\.0\.1 \(loopback\)/);
  t.is(hidden.hits, before, 'the upstream was never reached');
});

test('raw IP addresses pass only when listed', async (t) => {
  t.is((await proxiedGet(`http://127.0.0.1:${web.port}/`)).status, 200);
  t.is((await proxiedGet(`http://127.0.0.1:${hidden.port}/`)).status, 403);
  t.regex((await openTunnel(`169.254.169.254:80`)).status, / 403 /);
  t.regex((await openTunnel(`[::1]:${web.port}`)).status, / 403 /);
});

test('malformed requests are refused without any upstream connection', async (t) => {
  t.regex((await openTunnel('allowed.test')).status, / 400 /);
  t.regex((await openTunnel('user@allowed.test:80')).status, / 400 /);
  const relative = await new Promise<number>((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port: proxy.port, path: '/etc/passwd' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
  t.is(relative, 400);
  t.is((await proxiedGet(`https://allowed.test:${secure.port}/`)).status, 400, 'https:// in absolute form must use CONNECT');
});

test("connections past maxConnections are closed as they are accepted, so a sandbox cannot take the server's file descriptors; those under it are served", async (t) => {
  const capped = await EgressProxy.start({ host: '127.0.0.1', allow: [`127.0.0.1:${web.port}`], maxConnections: 20 });
  t.teardown(() => capped.close());
  // Fifty connections that send nothing and wait, as a command holding sockets open would.
  const sockets = Array.from({ length: 50 }, () => {
    const socket = connect(capped.port, '127.0.0.1');
    socket.on('error', () => {});
    return socket;
  });
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));
  const closed = await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<boolean>((resolve) => {
          socket.once('close', () => resolve(true));
          // Backstop only: those the proxy kept are still open once the others have all been closed.
          setTimeout(() => resolve(false), 5_000).unref();
        }),
    ),
  );
  t.is(closed.filter((wasClosed) => !wasClosed).length, 20, 'the proxy kept 20 and closed the other 30');
  sockets.forEach((socket) => socket.destroy());
  // Given back: a request goes through once the proxy has seen them close.
  const get = () =>
    new Promise<number>((resolve) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: capped.port, method: 'GET', path: `http://127.0.0.1:${web.port}/`, headers: { host: `127.0.0.1:${web.port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', () => resolve(0));
      req.end();
    });
  let served = 0;
  for (let tries = 0; tries < 100 && served === 0; tries++) {
    served = await get();
    if (served === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.is(served, 200);
});
