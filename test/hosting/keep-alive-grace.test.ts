/**
 * The hosting front tells clients a shorter keep-alive than it keeps: a
 * client reusing an idle connection just before the advertised timeout must
 * never meet a server closing it at that moment (the `fetch failed` of a
 * burst of sessions opened at once). Real HTTP, a raw socket.
 */
import test from 'ava';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createHostingHttpServer, KEEP_ALIVE_GRACE_MS } from '../../src/hosting/http/hosting-http-server.js';

async function responseHeaders(port: number): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  let text = '';
  for await (const chunk of socket) {
    text += String(chunk);
    if (text.includes('\r\n\r\n')) break;
  }
  socket.destroy();
  return text;
}

test('the advertised keep-alive timeout is the configured one, and the server keeps idle connections longer', async (t) => {
  const server = createHostingHttpServer({ handler: (_req, res) => void res.end('ok'), limits: { keepAliveTimeoutMs: 3000 } });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const headers = await responseHeaders((server.address() as AddressInfo).port);
  t.regex(headers, /^Keep-Alive: timeout=3\r$/im);
  t.is(server.keepAliveTimeout, 3000 + KEEP_ALIVE_GRACE_MS);
});

test('a keep-alive timeout under a second (advertised in whole seconds) is refused', (t) => {
  t.throws(() => createHostingHttpServer({ handler: () => {}, limits: { keepAliveTimeoutMs: 500 } }), {
    instanceOf: RangeError,
    message: /options\.limits\.keepAliveTimeoutMs must be at least 1000/,
  });
});
