import test from 'ava';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BodyBudget, type BodyRefusal } from '../../src/hosting/http/body-budget.js';

/** A plain server that reads every body through `budget` as an unauthenticated source, and answers what it read. */
async function serve(t: { teardown(fn: () => void): void }, budget: BodyBudget, refusals: BodyRefusal[]) {
  const server = createServer((req, res) => {
    void budget
      .read(req, res, { source: req.socket.remoteAddress ?? '' }, (limit) => refusals.push(limit))
      .then((read) => {
        if ('refusal' in read) return res.writeHead(read.refusal.status, read.refusal.headers ?? {}).end(read.refusal.message);
        res.end(JSON.stringify(read.body));
      });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** A chunked POST (no Content-Length) whose chunks are written as given; resolves with the status and body. */
function chunked(port: number, chunks: string[], localAddress = '127.0.0.1'): Promise<{ status: number; body: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', localAddress, method: 'POST', headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ...(res.headers['retry-after'] ? { retryAfter: res.headers['retry-after'] } : {}) }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

test('a chunked body is counted as it comes, per source address; past the budget it is refused with 503 and Retry-After', async (t) => {
  const budget = new BodyBudget({ sourceBytes: 64 * 1024, serverBytes: 1024 * 1024, maxBodyBytes: 1024 * 1024 });
  const refusals: BodyRefusal[] = [];
  const port = await serve(t, budget, refusals);
  const small = await chunked(port, ['{"a":', '1}']);
  t.deepEqual(small, { status: 200, body: '{"a":1}' });
  const big = await chunked(port, ['[', ...Array.from({ length: 100 }, () => `"${'x'.repeat(1000)}",`), '0]']);
  t.is(big.status, 503);
  t.is(big.retryAfter, '2');
  t.deepEqual(refusals, ['bufferedBodyBytes']);
  // Another address has its own budget.
  t.is((await chunked(port, ['[', ...Array.from({ length: 30 }, () => `"${'x'.repeat(1000)}",`), '0]'], '127.0.0.2')).status, 200);
  t.is(budget.bufferedBytes, 0, 'everything given back once answered');
});

test('a body that is not JSON gets 400 and gives its bytes back', async (t) => {
  const budget = new BodyBudget();
  const port = await serve(t, budget, []);
  const answer = await chunked(port, ['not json']);
  t.is(answer.status, 400);
  t.regex(answer.body, /Parse error/);
  t.is(budget.bufferedBytes, 0);
});

test('options are checked, naming the bad one', (t) => {
  t.throws(() => new BodyBudget({ serverBytes: 10 }), { instanceOf: RangeError, message: /options\.serverBytes must be at least 1024/ });
  t.throws(() => new BodyBudget({ nope: 1 } as never), { instanceOf: TypeError, message: /options\.nope/ });
});
