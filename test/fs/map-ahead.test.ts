import test from 'ava';
import { mapAhead } from '../../src/fs/map-ahead.js';

async function* numbers(count: number, pulled: number[] = [], onReturn?: () => void): AsyncGenerator<number> {
  try {
    for (let i = 0; i < count; i++) {
      pulled.push(i);
      yield i;
    }
  } finally {
    onReturn?.();
  }
}

const later = <T>(value: T, ms: number) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

test('results come in the order of the source, whichever call ends first', async (t) => {
  const seen: number[] = [];
  // Earlier items take longer: a pool that yielded as calls ended would reverse them.
  for await (const value of mapAhead(numbers(12), 4, (i) => later(i * 10, (12 - i) * 3))) seen.push(value);
  t.deepEqual(
    seen,
    Array.from({ length: 12 }, (_, i) => i * 10),
  );
});

test('at most `window` calls are in flight', async (t) => {
  let running = 0;
  let most = 0;
  const map = async (i: number) => {
    running++;
    most = Math.max(most, running);
    await later(undefined, 2);
    running--;
    return i;
  };
  let count = 0;
  for await (const _ of mapAhead(numbers(40), 3, map)) count++;
  t.is(count, 40);
  t.is(most, 3);
});

test('a failed call fails the sequence at its turn, after the results before it; the source is stopped', async (t) => {
  const seen: number[] = [];
  let returned = false;
  const map = async (i: number) => {
    if (i === 5) throw new Error('call 5 failed');
    return later(i, 1);
  };
  const error = await t.throwsAsync(async () => {
    for await (const value of mapAhead(
      numbers(100, [], () => (returned = true)),
      4,
      map,
    ))
      seen.push(value);
  });
  t.is(error?.message, 'call 5 failed');
  t.deepEqual(seen, [0, 1, 2, 3, 4]);
  t.true(returned);
});

test('stopping early stops the source: no more than the window is pulled past the last result taken', async (t) => {
  const pulled: number[] = [];
  let returned = false;
  for await (const value of mapAhead(
    numbers(1000, pulled, () => (returned = true)),
    4,
    (i) => later(i, 1),
  ))
    if (value === 9) break;
  t.true(returned);
  t.true(pulled.length <= 10 + 4, `${pulled.length} pulled`);
});

test('a window that is not a positive integer is refused', async (t) => {
  const run = (window: number) => mapAhead(numbers(1), window, async (i) => i).next();
  await t.throwsAsync(run(0), { instanceOf: RangeError, message: 'mapAhead: window must be a positive integer, got 0' });
  await t.throwsAsync(run(1.5), { instanceOf: RangeError });
});
