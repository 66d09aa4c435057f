import test from 'ava';
import { FairShare } from '../../src/worker-pool/fair-share.js';

/** A waiter's state, read without awaiting it. */
function track(promise: Promise<() => void>): { release?: () => void; failed?: unknown } {
  const state: { release?: () => void; failed?: unknown } = {};
  promise.then(
    (release) => (state.release = release),
    (error: unknown) => (state.failed = error),
  );
  return state;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('an owner alone leaves the last worker free; another owner takes it at once', async (t) => {
  const share = new FairShare(4);
  const a = [1, 2, 3, 4].map(() => track(share.acquire('a')));
  await settle();
  t.is(a.filter((one) => one.release).length, 3, 'three of four workers');
  const b = track(share.acquire('b'));
  await settle();
  t.truthy(b.release, "b's first call starts while a's run");
  t.is(share.waiting, 1);
});

test('a freed worker goes first to a waiting owner with nothing running, however many calls the others queued', async (t) => {
  const share = new FairShare(3);
  const a = [1, 2, 3, 4, 5].map(() => track(share.acquire('a')));
  await settle();
  t.is(share.runningFor('a'), 2);
  const b = [1, 2].map(() => track(share.acquire('b')));
  await settle();
  t.is(share.runningFor('b'), 1, 'b takes the kept worker');
  const c = track(share.acquire('c'));
  await settle();
  t.falsy(c.release, 'every worker is busy');
  a[0]!.release!();
  await settle();
  t.truthy(c.release, 'c had nothing running: it goes before a and b');
  b[0]!.release!();
  await settle();
  t.truthy(b[1]!.release, 'b again had nothing running');
  t.is(share.runningFor('a'), 1);
  t.is(share.waiting, 3);
});

test('a waiter that aborts leaves the queue and its reason is thrown', async (t) => {
  const share = new FairShare(1);
  const first = await share.acquire('a');
  const controller = new AbortController();
  const waiting = share.acquire('b', controller.signal);
  controller.abort(new Error('gone'));
  await t.throwsAsync(waiting, { message: 'gone' });
  t.is(share.waiting, 0);
  first();
  t.is(share.running, 0);
});

test('capacity must be a positive integer', (t) => {
  t.throws(() => new FairShare(0), { instanceOf: RangeError });
});
