/**
 * Floods of requests against a real hosting server, over raw sockets where a
 * client library would not misbehave: bodies announced and never finished
 * (each would pin its bytes), from one tenant and from two, requests without
 * a valid key, and session churn. Memory stays within the budget the server
 * chose (its accounting is asserted, never a duration or an RSS figure), and
 * every refusal comes early, with its status and Retry-After.
 */
import anyTest, { type TestFn } from 'ava';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, post, rawMcpPostHead, startHosting } from '../helpers/hosting.js';

const test = await requireDocker(anyTest as TestFn<unknown>, 'hosting/request-floods');

const MiB = 1024 * 1024;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A POST to /mcp over its own socket: headers sent now, the body only when `send` is called. */
interface RawPost {
  socket: Socket;
  answer: Promise<Answer>;
  /** The answer, once it came. */
  answered: Answer | undefined;
  send(bytes: number): void;
}

function rawPost(port: number, key: string, contentLength: number): RawPost {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(rawMcpPostHead({ port, key, contentLength }));
  const answer = new Promise<Answer>((resolve, reject) => {
    let text = '';
    const done = (): void => {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`connection closed without an answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...headerLines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) });
    };
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('close', done);
  });
  const post: RawPost = {
    socket,
    answer,
    answered: undefined,
    // A body of `{` and spaces: what matters is how many bytes are held, not what they say.
    send: (bytes) => void socket.write(Buffer.alloc(bytes, 0x20).fill('{', 0, 1)),
  };
  void answer.then((value) => (post.answered = value)).catch(() => {});
  return post;
}

/** Resolves once `count` of the answers have come, with them (a backstop only stops a broken test from hanging). */
async function first(count: number, answers: Array<Promise<Answer>>): Promise<Answer[]> {
  const got: Answer[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${count} answers came`)), 120_000);
    for (const answer of answers) {
      void answer.then(
        (value) => {
          got.push(value);
          if (got.length === count) {
            clearTimeout(timer);
            resolve(got);
          }
        },
        () => {},
      );
    }
  });
}

test('stalled bodies from two tenants never make the server hold more than its budget; the rest are refused at once, the stalled ones cut off', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const keys = { a: await addTenant(file, 'a'), b: await addTenant(file, 'b') };
  const hosting = await startHosting({
    tenantsFile: file,
    dataDir: join(dir, 'data'),
    // Per tenant 16 MiB (four 4 MiB bodies), server-wide 24 MiB: two tenants' budgets do not both fit.
    // The read timeout is the default's: long enough that no body is cut off before the last phase.
    requestBodies: { tenantBytes: 16 * MiB, serverBytes: 24 * MiB, readTimeoutMs: 30_000 },
  });
  t.teardown(() => hosting.close());
  const { server } = hosting;

  // 60 connections of tenant a, each announcing a 4 MiB body and sending none of it.
  const fromA = Array.from({ length: 60 }, () => rawPost(server.port, keys.a, 4 * MiB));
  t.teardown(() => fromA.forEach((post) => post.socket.destroy()));
  const refusedA = await first(
    56,
    fromA.map((post) => post.answer),
  );
  t.true(
    refusedA.every((answer) => answer.status === 503 && Number(answer.headers['retry-after']) >= 1),
    JSON.stringify(refusedA[0]),
  );
  t.true(refusedA.every((answer) => answer.body.includes('"limit":"bufferedBodyBytes"') && answer.body.includes('quota_exceeded')));
  t.is(server.bufferedBodyBytesOf('a'), 16 * MiB, "four bodies fill a's budget; nothing more was taken");

  // 60 more of tenant b: the server-wide budget has 8 MiB left.
  const fromB = Array.from({ length: 60 }, () => rawPost(server.port, keys.b, 4 * MiB));
  t.teardown(() => fromB.forEach((post) => post.socket.destroy()));
  const refusedB = await first(
    58,
    fromB.map((post) => post.answer),
  );
  t.true(
    refusedB.every((answer) => answer.status === 503 && answer.headers['retry-after'] !== undefined && answer.body.includes('serverBufferedBodyBytes')),
    JSON.stringify(refusedB.find((answer) => !answer.body.includes('serverBufferedBodyBytes'))),
  );
  t.is(server.bufferedBodyBytes, 24 * MiB, 'never more than the server-wide budget');
  t.is(server.bufferedBodyBytesOf('b'), 8 * MiB);

  // The six that were taken send all but their last byte, and stall there.
  const everyPost = [...fromA, ...fromB];
  for (const post of everyPost) if (post.answered === undefined) post.send(4 * MiB - 1);
  const statuses = (await Promise.all(everyPost.map((post) => post.answer))).map((answer) => answer.status);
  t.is(statuses.filter((status) => status === 503).length, 114);
  t.is(statuses.filter((status) => status === 408).length, 6, JSON.stringify(statuses.filter((status) => status !== 503)));
  t.is(server.bufferedBodyBytes, 0, 'every stalled body gave its bytes back');

  const refusals = hosting.observer.events.filter((event) => event.event === 'quota_refusal');
  t.is(refusals.filter((event) => 'limit' in event && event.limit === 'bufferedBodyBytes').length, 56);
  t.is(refusals.filter((event) => 'limit' in event && event.limit === 'serverBufferedBodyBytes').length, 58);
  t.is(refusals.filter((event) => 'limit' in event && event.limit === 'bodyReadTimeout').length, 6);

  // Both tenants are served again.
  for (const key of [keys.a, keys.b]) {
    const session = await connectTenant(t, server.url, key);
    t.is((await call(session.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
  }
});

test('a body announced over the size limit is refused with 413 before a byte of it is read', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'a');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const huge = rawPost(hosting.server.port, key, 1024 * MiB);
  t.teardown(() => huge.socket.destroy());
  const answer = await huge.answer;
  t.is(answer.status, 413);
  t.regex(answer.body, /request_too_large/);
  t.is(hosting.server.bufferedBodyBytes, 0);
});

test('a body with more JSON values than a tool call needs, or nested deeper, is refused with 413 before it is parsed; the session goes on', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'a');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const session = await connectTenant(t, hosting.server.url, key);
  const headers = { Authorization: `Bearer ${key}`, 'Mcp-Session-Id': session.sessionId };
  const callWith = (junk: unknown) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_directory', arguments: { dir_path: '.', junk } } });
  // Under the 4 MiB cap, each would have cost the event loop far more to parse than its bytes suggest.
  const bodies = {
    requestBodyValues: JSON.stringify(callWith(Array.from({ length: 1_000_000 }, () => ({})))),
    requestBodyDepth: JSON.stringify(callWith('@')).replace('"@"', '['.repeat(1_000_000) + ']'.repeat(1_000_000)),
  };
  for (const [limit, body] of Object.entries(bodies)) {
    t.true(body.length < 4 * MiB, `${limit}: ${body.length} bytes`);
    const response = await fetch(hosting.server.url, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body,
    });
    t.is(response.status, 413, limit);
    const { error } = (await response.json()) as { error: { message: string; data: { type: string; limit: string } } };
    t.like(error.data, { type: 'request_too_large', limit }, error.message);
  }
  t.is(hosting.server.bufferedBodyBytes, 0);
  t.is((await call(session.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
});

test('requests without a valid key never have a byte of their body buffered', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'a');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const forged = Array.from({ length: 100 }, (_, i) => rawPost(hosting.server.port, `tc_${'x'.repeat(12)}_${String(i).padStart(43, 'A')}`, 4 * MiB));
  t.teardown(() => forged.forEach((post) => post.socket.destroy()));
  for (const post of forged) post.send(4 * MiB - 1);
  const answers = await Promise.all(forged.map((post) => post.answer));
  t.true(answers.every((answer) => answer.status === 401));
  t.is(hosting.server.bufferedBodyBytes, 0);
});

test('a tenant opening and closing sessions past sessionsPerMinute gets 429 with Retry-After; its open session goes on', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'churner', ['--limit', 'sessionsPerMinute=5', '--limit', 'sessions=2']);
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const started = Date.now();
  const kept = await connectTenant(t, hosting.server.url, key);
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'churn', version: '1' } },
  };
  const auth = { Authorization: `Bearer ${key}` };
  // Open and close, one at a time, until the server refuses (a backstop of 30 tries).
  let opened = 1;
  let refused: Response | undefined;
  for (let i = 0; i < 30 && !refused; i++) {
    const answer = await post(hosting.server.url, initialize, auth);
    if (answer.status === 429) refused = answer;
    else {
      const text = await answer.text();
      t.is(answer.status, 200, text);
      opened++;
      await fetch(hosting.server.url, { method: 'DELETE', headers: { ...auth, 'Mcp-Session-Id': answer.headers.get('mcp-session-id')! } });
    }
  }
  // Five at once, then one every 12 s: however slow the machine, no more than that were let through.
  t.true(opened <= 5 + Math.ceil((Date.now() - started) / 12_000), `${opened} sessions opened`);
  t.truthy(refused, 'the churn was refused');
  t.true(Number(refused!.headers.get('retry-after')) >= 1);
  const body = (await refused!.json()) as { error: { message: string; data: { type: string; limit: string } } };
  t.like(body.error.data, { type: 'quota_exceeded', limit: 'sessionsPerMinute' });
  t.regex(body.error.message, /sessionsPerMinute \(5 new sessions a minute\)/);
  t.like(
    hosting.observer.events.find((event) => event.event === 'quota_refusal' && event.limit === 'sessionsPerMinute'),
    { tenant: 'churner' },
  );
  t.is(hosting.server.listSessions().length, 1, 'the refused open holds no session');
  t.is((await call(kept.client, 'list_directory', { dir_path: '.' })).errorType, undefined, 'the open session is served');
});
