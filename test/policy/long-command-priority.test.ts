import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { CommandSplitter } from '../../src/policy/split-thread.js';

/** The nice value of each of this process's threads. */
function threadNices(): number[] {
  return readdirSync(`/proc/${process.pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // The thread ended since the listing.
    }
  });
}

// A tenant sending long commands one after another keeps their parse thread busy: on a small host it must
// not take the CPU from the event loop and the shell thread that every tenant's calls go through.
test('long commands are judged on a thread below the process priority; ordinary ones are not', async (t) => {
  const splitter = new CommandSplitter();
  t.teardown(() => splitter.close());
  const before = threadNices();
  await splitter.judge('ls -la', []);
  t.deepEqual(
    threadNices().filter((nice) => nice > 0),
    before.filter((nice) => nice > 0),
    'the thread for ordinary commands keeps the process priority',
  );
  const judging = splitter.judge(`echo ${'`a` '.repeat(30_000)}`, []);
  // Seen while the thread exists (it stays until the splitter closes): no duration is assumed.
  let lowered: number[] = [];
  for (let i = 0; i < 500 && lowered.length === 0; i++) {
    lowered = threadNices().filter((nice) => nice >= 10);
    if (lowered.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await judging;
  t.deepEqual(lowered, [10]);
});
