import test from 'ava';
import { RepeatAggregator, type OverflowCount, type RepeatCount } from '../../src/telemetry/repeat-aggregator.js';

interface Event {
  source: string;
  group?: string;
  n?: number;
}

function aggregator(maxKeys = 3) {
  let now = 1_000;
  const counts: Array<RepeatCount<Event> | OverflowCount<Event>> = [];
  const repeats = new RepeatAggregator<Event>({
    intervalMs: 3_600_000,
    maxKeys,
    keyOf: (event) => (event.source === 'never' ? undefined : { key: event.source, group: event.group ?? 'all' }),
    onCounts: (batch) => counts.push(...batch),
    now: () => now,
  });
  return { repeats, counts, tick: (ms: number) => (now += ms) };
}

test('the first event of a key is written, the rest are counted into one record when the interval ends', (t) => {
  const { repeats, counts, tick } = aggregator();
  t.true(repeats.admit({ source: 'a', n: 1 }));
  for (let i = 2; i <= 1000; i++) {
    tick(1);
    t.false(repeats.admit({ source: 'a', n: i }));
  }
  repeats.flush();
  t.deepEqual(counts, [{ kind: 'repeats', first: { source: 'a', n: 1 }, count: 999, since: 1001, until: 1999 }]);
  t.true(repeats.admit({ source: 'a', n: 1001 }), 'a new interval writes the key again first');
});

test('events without a key are always written; a weight counts as that many events', (t) => {
  const { repeats, counts } = aggregator();
  for (let i = 0; i < 10; i++) t.true(repeats.admit({ source: 'never' }));
  t.true(repeats.admit({ source: 'b' }, 5));
  t.false(repeats.admit({ source: 'b' }, 7));
  repeats.close();
  t.like(counts, [{ kind: 'repeats', count: 7 }]);
});

test('past maxKeys distinct keys, events are counted per group only, with how many keys they had', (t) => {
  const { repeats, counts } = aggregator(3);
  let written = 0;
  for (let i = 0; i < 10_000; i++) if (repeats.admit({ source: `s${i % 500}`, group: i % 2 ? 'odd' : 'even' })) written++;
  t.is(written, 3, 'one line for each of the first three keys');
  repeats.close();
  const total = counts.reduce((sum, count) => sum + count.count, 0) + written;
  t.is(total, 10_000, 'every event is written or counted');
  const overflow = counts.filter((count): count is OverflowCount<Event> => count.kind === 'overflow');
  t.deepEqual(
    overflow.map((count) => [count.sample.group, count.keys]),
    [
      ['odd', 3],
      ['even', 3],
    ],
    'keys counted up to maxKeys',
  );
});

test('close writes what is still counted, once, and later events are written', (t) => {
  const { repeats, counts } = aggregator();
  repeats.admit({ source: 'a' });
  repeats.admit({ source: 'a' });
  repeats.close();
  repeats.close();
  t.is(counts.length, 1);
  t.true(repeats.admit({ source: 'a' }));
});

test('bad options are refused naming the field', (t) => {
  const base = { intervalMs: 1000, maxKeys: 3, keyOf: () => undefined, onCounts: () => {} };
  t.throws(() => new RepeatAggregator<Event>({ ...base, intervalMs: 0 }), {
    instanceOf: RangeError,
    message: 'RepeatAggregator: options.intervalMs must be at least 1',
  });
  t.throws(() => new RepeatAggregator<Event>({ ...base, maxKeys: 1.5 }), {
    instanceOf: TypeError,
    message: 'RepeatAggregator: options.maxKeys must be an integer',
  });
  t.throws(() => new RepeatAggregator<Event>({ ...base, onCounts: undefined as never }), {
    instanceOf: TypeError,
    message: 'RepeatAggregator: options.onCounts must be a function',
  });
});
