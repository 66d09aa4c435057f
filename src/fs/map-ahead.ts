/**
 * Maps an async sequence with up to `window` calls of `map` in flight, and
 * yields the results in the sequence's order. For reading many small files:
 * each read is a handful of thread-pool round trips (open, fstat, the fd
 * check, read, close), and one file at a time leaves the pool's other
 * threads idle. A call that fails fails the sequence when its turn comes;
 * stopping early lets the calls in flight finish and stops the source.
 */
export async function* mapAhead<T, R>(source: AsyncIterable<T>, window: number, map: (item: T) => Promise<R>): AsyncGenerator<R> {
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`mapAhead: window must be a positive integer, got ${window}`);
  const iterator = source[Symbol.asyncIterator]();
  const inFlight: Array<Promise<R>> = [];
  let exhausted = false;
  try {
    for (;;) {
      while (!exhausted && inFlight.length < window) {
        const next = await iterator.next();
        if (next.done === true) exhausted = true;
        else {
          const result = map(next.value);
          // Seen when its turn comes; until then a failure must not count as unhandled.
          result.catch(() => {});
          inFlight.push(result);
        }
      }
      const head = inFlight.shift();
      if (head === undefined) return;
      yield await head;
    }
  } finally {
    if (!exhausted) await iterator.return?.();
  }
}
