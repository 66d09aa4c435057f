/**
 * bench/policy: the policy engine's decision on each command of the
 * 140-command table (test/fixtures/policy/command-table.ts) against the
 * sample policy, parsing with toolcell's bash parser included, against the
 * shell-quote split the shell tool already does for every confirmation
 * (rootCommands), measured in the same run. Prints decisions per second
 * and per-command p50/p99, and the ratios. Target: p99 ≤ 1 ms per command
 * of ordinary length.
 *
 *   npm run bench:policy -- [--rounds N]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadPolicyFile } from '../src/policy/load-policy-file.js';
import { PolicyEngine } from '../src/policy/policy-engine.js';
import { rootCommands } from '../src/tools/shell/root-commands.js';
import { SAMPLE_POLICY, TABLE } from '../test/fixtures/policy/command-table.js';
import { fmt, percentile, sortNumbers } from './stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const rounds = Number(values.rounds);

const engine = await PolicyEngine.create(loadPolicyFile(SAMPLE_POLICY, { required: true, origin: 'user' }));
const commands = TABLE.map(([command]) => command);

function measure(run: (command: string) => unknown): { perSecond: number; samples: number[] } {
  for (let i = 0; i < 20; i++) for (const command of commands) run(command); // warm-up: JIT, wasm
  const samples: number[] = [];
  const start = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const command of commands) {
      const before = performance.now();
      run(command);
      samples.push(performance.now() - before);
    }
  }
  const seconds = (performance.now() - start) / 1000;
  return { perSecond: samples.length / seconds, samples: sortNumbers(samples) };
}

const policy = measure((command) => engine.decide({ toolName: 'run_shell_command', args: { command }, mode: 'default' }));
const baseline = measure((command) => rootCommands(command));

const longest = Math.max(...commands.map((c) => c.length));
console.log(`${commands.length} commands (up to ${longest} characters), ${rounds} rounds, ${engine.rules.length} rules`);
for (const [name, result] of [
  ['policy engine (bash parse + rules)', policy],
  ['baseline: shell-quote rootCommands', baseline],
] as const) {
  console.log(
    `${name.padEnd(44)} ${Math.round(result.perSecond).toLocaleString('en-US').padStart(9)} decisions/s   p50 ${fmt(percentile(result.samples, 50)).padStart(8)}   p99 ${fmt(percentile(result.samples, 99)).padStart(8)}   max ${fmt(result.samples.at(-1)!)}`,
  );
}
console.log(
  `ratio policy/baseline: throughput ${(policy.perSecond / baseline.perSecond).toFixed(2)}×, p50 ${(percentile(policy.samples, 50) / percentile(baseline.samples, 50)).toFixed(1)}×, p99 ${(percentile(policy.samples, 99) / percentile(baseline.samples, 99)).toFixed(1)}×`,
);
const p99 = percentile(policy.samples, 99);
console.log(`target p99 ≤ 1 ms per command: ${p99 <= 1 ? 'met' : 'NOT met'} (${fmt(p99)})`);
