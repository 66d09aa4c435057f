import test from 'ava';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EgressGate } from '../../../src/egress/egress-gate.js';
import { DEFAULT_FETCH_LIMITS, fetchPage, type FetchedPage } from '../../../src/tools/web/fetch-page.js';

// Each test holds one phase of a fetch open for ever; the per-URL limit is
// what must end it, whatever the phase. The servers record the sockets they
// accept, so a test can also see that the fetch let go of its connection.

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const LIMIT_MS = 300;
const limits = { ...DEFAULT_FETCH_LIMITS, timeoutMs: LIMIT_MS };

interface Stalling {
  port: number;
  /** Resolves with the first accepted socket once the client has closed it. */
  closed: Promise<void>;
  close(): void;
}

function track(server: Server | ReturnType<typeof createTcpServer>): Omit<Stalling, 'port'> {
  const sockets: Socket[] = [];
  const closed = new Promise<void>((resolve) => {
    server.on('connection', (socket: Socket) => {
      sockets.push(socket);
      socket.on('close', () => resolve());
    });
  });
  return {
    closed,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<Stalling> {
  const tracked = track(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, ...tracked };
}

function gateFor(port: number): EgressGate {
  return new EgressGate({ allow: [`127.0.0.1:${port}`] });
}

function assertEndedByTheLimit(t: import('ava').ExecutionContext, page: FetchedPage): void {
  t.false(page.ok);
  if (!page.ok) t.is(page.reason, `no answer within ${LIMIT_MS / 1000} s`);
}

test('a name that never resolves ends at the limit', async (t) => {
  const gate = new EgressGate({ allow: ['stuck.test:80'], resolver: () => new Promise<string[]>(() => undefined) });
  assertEndedByTheLimit(t, await fetchPage('http://stuck.test/', gate, limits, new AbortController().signal));
});

test('a TLS handshake that never ends ends at the limit, and the connection is let go', async (t) => {
  // A TCP server that reads (so it sees the client close) and never says a
  // word: the client waits for the server's hello.
  const silent = await listen(createTcpServer((socket) => socket.resume()));
  t.teardown(() => silent.close());
  assertEndedByTheLimit(t, await fetchPage(`https://127.0.0.1:${silent.port}/`, gateFor(silent.port), limits, new AbortController().signal));
  await silent.closed;
  t.pass();
});

test('headers that never come end at the limit, and the connection is let go', async (t) => {
  const mute = await listen(createHttpServer(() => undefined));
  t.teardown(() => mute.close());
  assertEndedByTheLimit(t, await fetchPage(`http://127.0.0.1:${mute.port}/`, gateFor(mute.port), limits, new AbortController().signal));
  await mute.closed;
  t.pass();
});

test('a body that stops half-way ends at the limit, and the connection is let go', async (t) => {
  const trickle = await listen(
    createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000000' });
      res.write('the first part, then nothing');
    }),
  );
  t.teardown(() => trickle.close());
  assertEndedByTheLimit(t, await fetchPage(`http://127.0.0.1:${trickle.port}/`, gateFor(trickle.port), limits, new AbortController().signal));
  await trickle.closed;
  t.pass();
});

test('a redirect to a server that never answers ends at the limit of the first URL', async (t) => {
  const mute = await listen(createHttpServer(() => undefined));
  const redirecting = await listen(createHttpServer((_req, res) => void res.writeHead(302, { location: `http://127.0.0.1:${mute.port}/` }).end()));
  t.teardown(() => {
    mute.close();
    redirecting.close();
  });
  const gate = new EgressGate({ allow: [`127.0.0.1:${mute.port}`, `127.0.0.1:${redirecting.port}`] });
  assertEndedByTheLimit(t, await fetchPage(`http://127.0.0.1:${redirecting.port}/`, gate, limits, new AbortController().signal));
});

test('a garbage collection while the fetch waits does not lose the limit', async (t) => {
  // On Node 20 a limit built as AbortSignal.any([signal, AbortSignal.timeout(ms)])
  // is collected here and never fires (nodejs/node#57736): the web_fetch hang CI met.
  const mute = await listen(createHttpServer(() => undefined));
  t.teardown(() => mute.close());
  const collecting = setInterval(collectGarbage, 20);
  t.teardown(() => clearInterval(collecting));
  assertEndedByTheLimit(t, await fetchPage(`http://127.0.0.1:${mute.port}/`, gateFor(mute.port), limits, new AbortController().signal));
});

test('the caller aborting ends the fetch with a throw, not with a time-limit result, and the connection is let go', async (t) => {
  const mute = await listen(createHttpServer(() => undefined));
  t.teardown(() => mute.close());
  const controller = new AbortController();
  const fetching = fetchPage(`http://127.0.0.1:${mute.port}/`, gateFor(mute.port), { ...limits, timeoutMs: 600_000 }, controller.signal);
  setImmediate(() => controller.abort(new Error('cancelled by the user')));
  await t.throwsAsync(fetching);
  await mute.closed;
});
