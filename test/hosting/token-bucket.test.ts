import test from 'ava';
import { TokenBucket } from '../../src/hosting/admission/token-bucket.js';

test('a burst up to the capacity passes, then the refill rate; bad options are refused naming the field', (t) => {
  let now = 0;
  const bucket = new TokenBucket({ perMinute: 2, now: () => now });
  t.deepEqual(bucket.take(), { ok: true });
  t.deepEqual(bucket.take(), { ok: true });
  t.deepEqual(bucket.take(), { ok: false, retryAfterSeconds: 30 });
  now += 30_000;
  t.deepEqual(bucket.take(), { ok: true });
  t.throws(() => new TokenBucket({ perMinute: 0 }), { instanceOf: RangeError, message: 'TokenBucket: options.perMinute must be more than 0' });
  t.throws(() => new TokenBucket({ perMinute: 1, now: 5 as never }), { instanceOf: TypeError, message: 'TokenBucket: options.now must be a function' });
});
