import test from 'ava';
import { limitsKey, sessionLimitsSchema } from '../../src/backends/session-limits.js';

test('equal limits give one key whatever the order of their fields', (t) => {
  const a = limitsKey({ memory: 64, cpus: 1, user: { uid: 5, gid: 6 }, runtime: 'runsc' });
  const b = limitsKey({ runtime: 'runsc', user: { gid: 6, uid: 5 }, cpus: 1, memory: 64 });
  t.is(a, b);
});

test('a field left out is not a field set, and a changed field changes the key', (t) => {
  t.is(limitsKey({ memory: 64, cpuGroup: undefined }), limitsKey({ memory: 64 }));
  t.not(limitsKey({ memory: 64 }), limitsKey({ memory: 64, cpuGroup: 'acme' }));
  t.not(limitsKey({ memory: 64, user: { uid: 5, gid: 6 } }), limitsKey({ memory: 64, user: { uid: 5, gid: 7 } }));
});

test('the session limits name memory as every layer does, with its bounds', (t) => {
  t.true(sessionLimitsSchema.safeParse({ memory: 64 * 1024 ** 2, cpuGroup: 'acme' }).success);
  t.false(sessionLimitsSchema.safeParse({ memory: 2 * 1024 ** 4 }).success, 'over the maximum');
  t.false(sessionLimitsSchema.safeParse({ memoryBytes: 64 * 1024 ** 2 }).success, 'the old name is refused');
});
