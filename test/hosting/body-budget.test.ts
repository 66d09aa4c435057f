import test from 'ava';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServerCpuLedger } from '../../src/hosting/admission/server-cpu.js';
import { BodyBudget, type BodyRefusal } from '../../src/hosting/http/body-budget.js';
import type { WorkBudget } from '../../src/contracts/work-budget.js';

/** A plain server that reads every body through `budget` as an unauthenticated source (charged to `work` if given), and answers what it read. */
async function serve(t: { teardown(fn: () => void): void }, budget: BodyBudget, refusals: BodyRefusal[], work?: WorkBudget) {
  const server = createServer((req, res) => {
    void budget
      .read(req, res, { source: req.socket.remoteAddress ?? '', budget: work }, (limit) => refusals.push(limit))
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

/** A POST with a Content-Length; resolves with the status (and the answer, for `sizedAnswer`). */
function sized(port: number, body: string): Promise<number> {
  return sizedAnswer(port, body).then((answer) => answer.status);
}

function sizedAnswer(port: number, body: string): Promise<{ status: number; body: string; retryAfter?: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end(body);
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

test('a body with more JSON values than maxBodyValues, or nested deeper than maxBodyDepth, gets 413 before it is parsed; one long string is one value', async (t) => {
  const budget = new BodyBudget({ maxBodyValues: 1000, maxBodyDepth: 16 });
  const refusals: BodyRefusal[] = [];
  const port = await serve(t, budget, refusals);
  const many = await chunked(port, [JSON.stringify({ params: { junk: Array.from({ length: 2000 }, () => ({})) } })]);
  t.is(many.status, 413);
  t.regex(many.body, /more than 1000 JSON values/);
  const deep = await chunked(port, ['{"a":', '['.repeat(17), ']'.repeat(17), '}']);
  t.is(deep.status, 413);
  t.regex(deep.body, /deeper than 16 levels/);
  t.deepEqual(refusals, ['requestBodyValues', 'requestBodyDepth']);
  const text = 'a,b,[c],{d}\n'.repeat(100_000);
  const long = await chunked(port, [JSON.stringify({ content: text })]);
  t.is(long.status, 200);
  t.is((JSON.parse(long.body) as { content: string }).content, text);
  t.is((await chunked(port, [JSON.stringify(Array.from({ length: 999 }, (_, i) => i))])).status, 200, 'at the limit');
  t.is(budget.bufferedBytes, 0);
});

test("the event loop's time on a body is charged to its owner's budget; past it, its next large body waits before it is read, and small ones never wait", async (t) => {
  // A hundredth of a CPU: 40 ms of burst, then 10 ms a second.
  const ledger = new ServerCpuLedger({ rateOf: () => 0.01 });
  const budget = new BodyBudget();
  const port = await serve(t, budget, [], ledger.budgetFor('greedy'));
  const usage = () => ledger.usage().find((entry) => entry.tenant === 'greedy') ?? { cpuSeconds: 0, waitedSeconds: 0 };
  const body = JSON.stringify({ content: 'x'.repeat(3 * 1024 * 1024) });
  // Each 3 MiB body costs the event loop a few ms: charged until the burst is spent, then the next one waits.
  for (let i = 0; i < 200 && usage().waitedSeconds === 0; i++) t.is(await sized(port, body), 200);
  t.true(usage().cpuSeconds > 0.04, `charged ${usage().cpuSeconds} s`);
  t.true(usage().waitedSeconds > 0, 'a large body waited for its share');
  // In debt now: a small body (a Content-Length of at most 64 KiB) is read at once, without asking the budget.
  const waited = usage().waitedSeconds;
  t.is(await sized(port, '{"method":"notifications/cancelled"}'), 200);
  t.is(usage().waitedSeconds, waited);
  t.is(ledger.waiting, 0);
});

test('a large body whose owner is further in debt than maxBudgetWaitMs is refused with 429 and Retry-After, its bytes given back; a small one is still read', async (t) => {
  const ledger = new ServerCpuLedger({ rateOf: () => 0.01 });
  // A second of CPU charged at a hundredth of a CPU a second: about 96 s of debt.
  ledger.budgetFor('greedy').charge(1000);
  const refusals: BodyRefusal[] = [];
  const budget = new BodyBudget({ maxBudgetWaitMs: 300 });
  const port = await serve(t, budget, refusals, ledger.budgetFor('greedy'));
  const answer = await sizedAnswer(port, JSON.stringify({ content: 'x'.repeat(1024 * 1024) }));
  t.is(answer.status, 429);
  t.is(answer.retryAfter, '1');
  t.regex(answer.body, /serverCpu/);
  t.deepEqual(refusals, ['serverCpu']);
  t.is(budget.bufferedBytes, 0);
  t.is(ledger.waiting, 0, 'the wait was given up');
  t.is(await sized(port, '{"method":"notifications/cancelled"}'), 200);
});

test('options are checked, naming the bad one', (t) => {
  t.throws(() => new BodyBudget({ serverBytes: 10 }), { instanceOf: RangeError, message: /options\.serverBytes must be at least 1024/ });
  t.throws(() => new BodyBudget({ nope: 1 } as never), { instanceOf: TypeError, message: /options\.nope/ });
});
