/**
 * The MCP HTTP client's fetch (fetch-own-signal.ts) against a real HTTP
 * server and Node's own fetch: the transport's one signal keeps no listener
 * per finished request, and aborting it still ends requests and bodies in
 * flight.
 */
import test from 'ava';
import { getEventListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchWithOwnSignal } from '../../src/mcp/fetch-own-signal.js';

/** /json answers at once; /stream sends one chunk and holds the body open; /redirect and /missing answer with no success. */
async function server(t: { teardown(fn: () => void): void }): Promise<string> {
  const open = new Set<ServerResponse>();
  const http = createServer((req, res) => {
    if (req.url === '/json') return res.end('{"ok":true}');
    if (req.url === '/redirect') return res.writeHead(307, { location: '/json' }).end();
    if (req.url === '/missing') return res.writeHead(404).end('no such thing');
    open.add(res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const res of open) res.destroy();
    http.close();
  });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

test('many finished requests leave no listener on the shared signal (plain fetch leaves one each until GC)', async (t) => {
  const base = await server(t);
  const shared = new AbortController();
  const ownFetch = fetchWithOwnSignal();
  for (let i = 0; i < 200; i++) t.is(await (await ownFetch(`${base}/json`, { signal: shared.signal })).text(), '{"ok":true}');
  await (await ownFetch(`${base}/missing`, { signal: shared.signal })).text();
  const redirect = await ownFetch(`${base}/redirect`, { signal: shared.signal, redirect: 'manual' });
  t.is(redirect.status, 307, 'a redirect is passed on as it came');
  t.is(abortListeners(shared.signal), 0);
  // The measure itself, with Node's fetch as the transport used it: a listener a request, freed only by GC.
  const plain = new AbortController();
  for (let i = 0; i < 50; i++) await (await fetch(`${base}/json`, { signal: plain.signal })).text();
  t.true(abortListeners(plain.signal) > 0, 'plain fetch leaves listeners behind');
});

test('a streamed body keeps its tie until it is cancelled; the response keeps its url and status', async (t) => {
  const base = await server(t);
  const shared = new AbortController();
  const response = await fetchWithOwnSignal()(`${base}/stream`, { signal: shared.signal });
  t.is(response.status, 200);
  t.is(response.url, `${base}/stream`);
  t.is(response.headers.get('content-type'), 'text/event-stream');
  const reader = response.body!.getReader();
  t.is(new TextDecoder().decode((await reader.read()).value), 'data: first\n\n');
  t.is(abortListeners(shared.signal), 1, 'tied while the body is open');
  await reader.cancel();
  t.is(abortListeners(shared.signal), 0);
});

test('aborting the shared signal ends a body in flight and a request not yet answered', async (t) => {
  const base = await server(t);
  const shared = new AbortController();
  const ownFetch = fetchWithOwnSignal();
  const response = await ownFetch(`${base}/stream`, { signal: shared.signal });
  const reader = response.body!.getReader();
  await reader.read();
  const pending = reader.read();
  shared.abort(new Error('closed'));
  await t.throwsAsync(pending);
  await t.throwsAsync(ownFetch(`${base}/stream`, { signal: shared.signal }), undefined, 'an already aborted signal refuses at once');
  t.is(abortListeners(shared.signal), 0);
});
