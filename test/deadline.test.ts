import test from 'ava';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deadline } from '../src/deadline.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

test('the time running out aborts the signal with a TimeoutError and says it expired', async (t) => {
  const limit = deadline(20);
  const reason = await aborted(limit.signal);
  t.true(limit.expired);
  t.is((reason as DOMException).name, 'TimeoutError');
});

test('the parent aborting first aborts with its reason, and the deadline did not expire', async (t) => {
  const parent = new AbortController();
  const limit = deadline(600_000, parent.signal);
  const reason = new Error('cancelled');
  const seen = aborted(limit.signal);
  parent.abort(reason);
  t.is(await seen, reason);
  t.false(limit.expired);
  limit.dispose();
});

test('an already aborted parent aborts the deadline at once', (t) => {
  const parent = new AbortController();
  parent.abort(new Error('gone'));
  const limit = deadline(600_000, parent.signal);
  t.true(limit.signal.aborted);
  limit.dispose();
});

test('survives garbage collection while nothing but the timer refers to it', async (t) => {
  // The shape that hung web_fetch on Node 20: only a listener holds the
  // composed signal, and a collection runs before the time is up.
  const parent = new AbortController();
  const fired = new Promise<void>((resolve) => {
    deadline(100, parent.signal).signal.addEventListener('abort', () => resolve(), { once: true });
  });
  const collecting = setInterval(collectGarbage, 10);
  t.teardown(() => clearInterval(collecting));
  await fired;
  t.pass();
});

test('dispose stops the timer and leaves the signal as it is', async (t) => {
  const parent = new AbortController();
  const limit = deadline(10, parent.signal);
  limit.dispose();
  await new Promise((resolve) => setTimeout(resolve, 50));
  parent.abort();
  t.false(limit.signal.aborted);
  t.false(limit.expired);
});
