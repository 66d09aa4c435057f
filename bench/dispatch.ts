/**
 * bench/dispatch: N no-op calls through registry + scheduler + worker pool,
 * against raw `piscina.run()` of the same no-op, measured in the same run.
 * Prints p50/p99 per-call latency (one call at a time), throughput (calls/s
 * with batches in flight), and the ratios. Targets: p50 ratio ≤ 2.0 and
 * ≥ 10,000 calls/s with two threads.
 *
 *   npm run bench:dispatch -- [--calls N] [--threads T] [--batch B]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Piscina } from 'piscina';
import { WorkerPool } from '../src/worker-pool/worker-pool.js';
import { ToolRegistry } from '../src/registry/tool-registry.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { fmt, percentile, sortNumbers } from './stats.js';
import { timeEach } from './timing.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '20000' }, threads: { type: 'string', default: '2' }, batch: { type: 'string', default: '256' } },
});
const calls = Number(values.calls);
const threads = Number(values.threads);
const batch = Number(values.batch);
const never = new AbortController().signal;

/** Latency samples (sorted, ms) after a long warm-up: JIT, worker start, caches. */
function measureLatency(run: () => Promise<unknown>, n: number): Promise<number[]> {
  return timeEach(n, run, Math.min(2000, n / 5));
}

async function measureThroughput(runBatch: (size: number) => Promise<unknown>, n: number): Promise<number> {
  const start = performance.now();
  for (let done = 0; done < n; done += batch) await runBatch(Math.min(batch, n - done));
  return n / ((performance.now() - start) / 1000);
}

const workerUrl = new URL('./noop-worker.js', import.meta.url).href;
const raw = new Piscina({ filename: workerUrl, minThreads: threads, maxThreads: threads, idleTimeout: Number.POSITIVE_INFINITY });

const pool = new WorkerPool({ threads, toolModules: [new URL('../test/fixtures/tools/test-tools.js', import.meta.url).href] });
const registry = new ToolRegistry();
const root = process.cwd();
for (const tool of await pool.createTools({ workspace: { roots: [root], stateDir: `${root}/.toolcell` } })) registry.register(tool);
const scheduler = new Scheduler({ registry, approvalMode: 'default' });
let id = 0;
const rawCall = () => raw.run({});
const toolcellCall = () => scheduler.schedule([{ callId: `c${++id}`, name: 'noop', args: {} }], never);
const rawBatch = (size: number) => Promise.all(Array.from({ length: size }, () => raw.run({})));
const toolcellBatch = (size: number) =>
  scheduler.schedule(
    Array.from({ length: size }, () => ({ callId: `c${++id}`, name: 'noop', args: {} })),
    never,
  );

// Rounds alternate between the two so that drift (CPU frequency, GC, other load) hits both alike.
const rounds = 4;
const rawSamples: number[] = [];
const toolcellSamples: number[] = [];
for (let round = 0; round < rounds; round++) {
  rawSamples.push(...(await measureLatency(rawCall, calls / rounds)));
  toolcellSamples.push(...(await measureLatency(toolcellCall, calls / rounds)));
}
// Throughput in many short back-to-back pairs (two batches each way, the
// first of each pair alternating): on a machine whose other load swings
// within seconds, a ratio of figures taken milliseconds apart holds where a
// ratio of two long runs is a draw.
for (let i = 0; i < 4; i++) {
  await rawBatch(batch);
  await toolcellBatch(batch);
}
const rawRates: number[] = [];
const toolcellRates: number[] = [];
const pairRatios: number[] = [];
const perPair = 2 * batch;
for (let pair = 0; pair < Math.max(1, Math.round(calls / perPair)); pair++) {
  const first = pair % 2 === 0 ? rawBatch : toolcellBatch;
  const second = pair % 2 === 0 ? toolcellBatch : rawBatch;
  const a = await measureThroughput(first, perPair);
  const b = await measureThroughput(second, perPair);
  const [rawRate, toolcellRate] = pair % 2 === 0 ? [a, b] : [b, a];
  rawRates.push(rawRate);
  toolcellRates.push(toolcellRate);
  pairRatios.push(toolcellRate / rawRate);
}
await raw.destroy();
await pool.close();
const rawLatency = sortNumbers(rawSamples);
const toolcellLatency = sortNumbers(toolcellSamples);
const median = (values: number[]) => percentile(sortNumbers(values), 50);
const rawThroughput = median(rawRates);
const toolcellThroughput = median(toolcellRates);
const throughputRatio = median(pairRatios);

const p50Ratio = percentile(toolcellLatency, 50) / percentile(rawLatency, 50);
console.log(
  `bench/dispatch: ${calls} no-op calls each way in ${rounds} alternating rounds for latency, and in ${pairRatios.length} back-to-back pairs of ${perPair} for throughput (batches of ${batch}); ${threads} threads, Node ${process.version}`,
);
console.log('');
console.log('                          p50         p99         calls/s');
console.log(
  `raw piscina.run()         ${fmt(percentile(rawLatency, 50)).padEnd(11)} ${fmt(percentile(rawLatency, 99)).padEnd(11)} ${rawThroughput.toFixed(0)}`,
);
console.log(
  `registry+scheduler+worker ${fmt(percentile(toolcellLatency, 50)).padEnd(11)} ${fmt(percentile(toolcellLatency, 99)).padEnd(11)} ${toolcellThroughput.toFixed(0)}`,
);
console.log('');
console.log(`p50 ratio (toolcell / raw): ${p50Ratio.toFixed(2)}   target ≤ 2.00   ${p50Ratio <= 2 ? 'met' : 'NOT met'}`);
console.log(`p99 ratio (toolcell / raw): ${(percentile(toolcellLatency, 99) / percentile(rawLatency, 99)).toFixed(2)}`);
console.log(
  `throughput: ${toolcellThroughput.toFixed(0)} calls/s   target ≥ 10000   ${toolcellThroughput >= 10_000 ? 'met' : 'NOT met'}  (raw: ${rawThroughput.toFixed(0)})`,
);
console.log(
  `throughput ratio (toolcell / raw), median of the pairs: ${throughputRatio.toFixed(2)}   target ≥ 0.75   ${throughputRatio >= 0.75 ? 'met' : 'NOT met'}  (quartiles ${percentile(sortNumbers(pairRatios.slice()), 25).toFixed(2)}–${percentile(sortNumbers(pairRatios.slice()), 75).toFixed(2)})`,
);
