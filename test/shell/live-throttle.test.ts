import test from 'ava';
import { LiveThrottle } from '../../src/shell/output/live-throttle.js';

test('the first change is published at once, and bad options are refused naming the field', (t) => {
  let published = 0;
  const throttle = new LiveThrottle({ intervalMs: 60_000, publish: () => published++ });
  throttle.changed();
  throttle.changed();
  t.is(published, 1);
  throttle.stop();
  t.throws(() => new LiveThrottle({ intervalMs: -1, publish: () => {} }), {
    instanceOf: RangeError,
    message: 'LiveThrottle: options.intervalMs must be at least 0',
  });
  t.throws(() => new LiveThrottle({ intervalMs: 10 } as never), { instanceOf: TypeError, message: 'LiveThrottle: options.publish must be a function' });
});
