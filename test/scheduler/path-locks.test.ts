import test from 'ava';
import { PathLocks } from '../../src/scheduler/path-locks.js';

test('holders of the same path go one at a time, in order; other paths do not wait', async (t) => {
  const locks = new PathLocks();
  const order: string[] = [];
  const releaseA = await locks.acquire(['/w/f']);
  const b = locks.acquire(['/w/./f']).then((release) => {
    order.push('b');
    release();
  });
  const other = await locks.acquire(['/w/g']);
  order.push('other');
  other();
  order.push('a');
  releaseA();
  await b;
  t.deepEqual(order, ['other', 'a', 'b']);
});

test('no paths means no waiting', async (t) => {
  const locks = new PathLocks();
  await locks.acquire(['/x']);
  const release = await locks.acquire([]);
  release();
  t.pass();
});
