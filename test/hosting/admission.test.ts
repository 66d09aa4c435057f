import test from 'ava';
import { FairGate } from '../../src/hosting/admission/fair-gate.js';
import { TokenBucket } from '../../src/hosting/admission/token-bucket.js';

test('the token bucket lets a burst through, then says when the next token comes', (t) => {
  let now = 0;
  const bucket = new TokenBucket({ perMinute: 2, now: () => now });
  t.true(bucket.take().ok);
  t.true(bucket.take().ok);
  t.deepEqual(bucket.take(), { ok: false, retryAfterSeconds: 30 });
  now += 30_000;
  t.true(bucket.take().ok);
  t.false(bucket.take().ok);
});

test('a full gate serves waiting tenants in turn, not in arrival order', async (t) => {
  const gate = new FairGate(1);
  const first = await gate.acquire('busy');
  const order: string[] = [];
  const wait = (tenant: string) =>
    gate.acquire(tenant).then((release) => {
      order.push(tenant);
      release();
    });
  // The busy tenant queues three before the quiet one queues its one.
  const all = Promise.all([wait('busy'), wait('busy'), wait('busy'), wait('quiet')]);
  t.is(gate.waiting, 4);
  first();
  await all;
  t.deepEqual(order, ['busy', 'quiet', 'busy', 'busy']);
  t.is(gate.held, 0);
});

test('an aborted waiter leaves the queue and the slot goes to the next', async (t) => {
  const gate = new FairGate(1);
  const held = await gate.acquire('a');
  const abort = new AbortController();
  const gone = gate.acquire('b', abort.signal);
  const next = gate.acquire('c');
  abort.abort(new Error('gave up'));
  await t.throwsAsync(gone, { message: 'gave up' });
  held();
  (await next)();
  t.is(gate.held, 0);
  t.is(gate.waiting, 0);
});
