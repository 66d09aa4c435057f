/** Timing loops shared by the benchmarks. */
import { performance } from 'node:perf_hooks';
import { sortNumbers } from './stats.js';

/** Times `n` sequential runs after `warmup` untimed ones; returns the samples sorted (ms). */
export async function timeEach(n: number, run: () => Promise<unknown>, warmup = Math.min(20, Math.ceil(n / 10))): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  return sortNumbers(samples);
}

/**
 * Times several contenders on one machine at one time: `rounds` rounds, each
 * running every contender `n / rounds` times in turn, so that drift (other
 * load, CPU frequency, GC) hits them alike. Returns each one's samples, sorted.
 */
export async function timeInterleaved<K extends string>(contenders: Record<K, () => Promise<unknown>>, n: number, rounds = 4): Promise<Record<K, number[]>> {
  const names = Object.keys(contenders) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (const name of names) for (let i = 0; i < 10; i++) await contenders[name]();
  for (let round = 0; round < rounds; round++) {
    for (const name of names) samples[name].push(...(await timeEach(Math.ceil(n / rounds), contenders[name], 2)));
  }
  for (const name of names) sortNumbers(samples[name]);
  return samples;
}
