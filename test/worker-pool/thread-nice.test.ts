/**
 * The worker pool's threads at the OS priority the pool was given: a hosting
 * server's file-tool work (a tenant's regular expression over a large file)
 * can wait for the threads every tenant's calls go through.
 */
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { WorkerPool } from '../../src/worker-pool/worker-pool.js';

/** The nice value of each of this process's threads (field 19 of /proc/<pid>/task/<tid>/stat). */
async function threadNices(): Promise<number[]> {
  const tasks = await readdir('/proc/self/task');
  const stats = await Promise.all(tasks.map((task) => readFile(`/proc/self/task/${task}/stat`, 'utf8').catch(() => undefined)));
  return stats.flatMap((stat) => (stat === undefined ? [] : [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])]));
}

test('a pool given threadNice runs each of its threads at that priority, and nothing else of the process', async (t) => {
  const before = (await threadNices()).filter((nice) => nice === 7).length;
  const pool = new WorkerPool({ threads: 3, threadNice: 7 });
  t.teardown(() => pool.close());
  // Piscina starts its minimum of threads at once; each lowers its own priority as it starts.
  for (let i = 0; i < 600 && (await threadNices()).filter((nice) => nice === 7).length - before < 3; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  t.is((await threadNices()).filter((nice) => nice === 7).length - before, 3, 'the three pool threads');
  t.true(
    (await threadNices()).some((nice) => nice === 0),
    'the main thread keeps its priority',
  );
});

test('threadNice is checked: 0-19', (t) => {
  t.throws(() => new WorkerPool({ threadNice: 20 }), { message: /threadNice/ });
  t.throws(() => new WorkerPool({ threadNice: -1 }), { message: /threadNice/ });
});
