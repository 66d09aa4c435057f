/**
 * bench/policy: the policy engine, three phases measured in one run.
 *
 * 1. Speed: the engine's decision on each command of the 140-command table
 *    (test/fixtures/policy/command-table.ts) against the sample policy,
 *    parse and judgement in the parse thread included, against the
 *    shell-quote split the shell tool already does for every confirmation
 *    (rootCommands). Decisions per second, per-command p50/p99, ratios.
 *    Target: p50 ≤ 1 ms per command of ordinary length (a hop to the parse
 *    thread and back; the p99 follows how busy the machine is).
 * 2. The main thread while 128 KiB commands are judged: event-loop delay
 *    (p99, max) idle and while the engine judges a stream of the slowest
 *    lines to parse, as a ratio. Target: ≤ 3×.
 * 3. Differential (needs Docker): a generated corpus (test/fixtures/policy/
 *    bash-corpus.ts) split by the engine and run by real bash in the sandbox
 *    with xtrace; prints how many were generated, agreed, could not be
 *    judged, and every disagreement (a command bash ran that the engine
 *    neither reported nor marked "cannot be judged"). Exits 1 on any.
 *
 *   npm run bench:policy -- [--rounds N] [--differential N] [--seed S]
 */
import { chown, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createDockerBackend } from '../src/backends/docker/docker-backend.js';
import { MAX_COMMAND_BYTES } from '../src/contracts/defaults.js';
import { loadPolicyFile } from '../src/policy/load-policy-file.js';
import { PolicyEngine } from '../src/policy/policy-engine.js';
import { rootCommands } from '../src/tools/shell/root-commands.js';
import { BashCorpus } from '../test/fixtures/policy/bash-corpus.js';
import { SAMPLE_POLICY, TABLE } from '../test/fixtures/policy/command-table.js';
import { TRACE_OWNER, runDifferential } from '../test/helpers/bash-differential.js';
import { sandboxReadiness } from '../test/helpers/docker.js';
import { fmt, percentile, sortNumbers } from './stats.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '100' }, differential: { type: 'string', default: '20000' }, seed: { type: 'string', default: '1' } },
});
const rounds = Number(values.rounds);

const engine = await PolicyEngine.create(loadPolicyFile(SAMPLE_POLICY, { required: true, origin: 'user' }));
const commands = TABLE.map(([command]) => command);

async function measure(run: (command: string) => unknown): Promise<{ perSecond: number; samples: number[] }> {
  for (let i = 0; i < 5; i++) for (const command of commands) await run(command); // warm-up: JIT, the parse thread
  const samples: number[] = [];
  const start = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const command of commands) {
      const before = performance.now();
      await run(command);
      samples.push(performance.now() - before);
    }
  }
  const seconds = (performance.now() - start) / 1000;
  return { perSecond: samples.length / seconds, samples: sortNumbers(samples) };
}

console.log('## 1. speed');
const policy = await measure((command) => engine.decide({ toolName: 'run_shell_command', args: { command }, mode: 'default' }));
const baseline = await measure((command) => rootCommands(command));
const longest = Math.max(...commands.map((c) => c.length));
console.log(`${commands.length} commands (up to ${longest} characters), ${rounds} rounds, ${engine.rules.length} rules`);
for (const [name, result] of [
  ['policy engine (parse thread: parse + rules)', policy],
  ['baseline: shell-quote rootCommands', baseline],
] as const) {
  console.log(
    `${name.padEnd(44)} ${Math.round(result.perSecond).toLocaleString('en-US').padStart(9)} decisions/s   p50 ${fmt(percentile(result.samples, 50)).padStart(8)}   p99 ${fmt(percentile(result.samples, 99)).padStart(8)}   max ${fmt(result.samples.at(-1)!)}`,
  );
}
console.log(
  `ratio policy/baseline: throughput ${(policy.perSecond / baseline.perSecond).toFixed(2)}×, p50 ${(percentile(policy.samples, 50) / percentile(baseline.samples, 50)).toFixed(1)}×, p99 ${(percentile(policy.samples, 99) / percentile(baseline.samples, 99)).toFixed(1)}×`,
);
const p50 = percentile(policy.samples, 50);
console.log(`target p50 ≤ 1 ms per command: ${p50 <= 1 ? 'met' : 'NOT met'} (${fmt(p50)})`);

console.log('\n## 2. the main thread while 128 KiB commands are judged');
/** Among the slowest lines to parse, each just under the cap. */
const HEAVY: Record<string, string> = {
  'backticks (10,000+ substitutions)': `echo ${'`a` '.repeat(Math.floor((MAX_COMMAND_BYTES - 10) / 4))}`,
  '[[ ]] with arithmetic operands': '[[ a -eq b ]]; '.repeat(Math.floor((MAX_COMMAND_BYTES - 10) / 15)),
  '65,000 words': `echo ${'a '.repeat(Math.floor((MAX_COMMAND_BYTES - 10) / 2))}`,
};
async function loopDelay(work: () => Promise<unknown>): Promise<{ p99: number; max: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  await work();
  histogram.disable();
  return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 };
}
for (const [name, command] of Object.entries(HEAVY)) {
  let judged = 0;
  const started = performance.now();
  const busy = await loopDelay(async () => {
    for (let i = 0; i < 5; i++) {
      await engine.decide({ toolName: 'run_shell_command', args: { command }, mode: 'yolo' });
      judged++;
    }
  });
  const elapsed = performance.now() - started;
  const idle = await loopDelay(() => new Promise((resolve) => setTimeout(resolve, elapsed)));
  console.log(
    `${name.padEnd(36)} ${judged} judged in ${(elapsed / 1000).toFixed(1)} s; event-loop delay p99 ${fmt(busy.p99)} (idle ${fmt(idle.p99)}), max ${fmt(busy.max)} (idle ${fmt(idle.max)}); p99 ratio ${(busy.p99 / idle.p99).toFixed(2)}×`,
  );
}

console.log('\n## 3. differential: the splitter against real bash in the sandbox');
const count = Number(values.differential);
const readiness = await sandboxReadiness();
if (!readiness.ready) {
  console.log(`skipped: ${readiness.reason}`);
  process.exit(0);
}
const workspaceRoot = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-bench-policy-')));
// As root, the workspace goes to an ordinary user: bash as root ignores the trace's PS4.
if (process.getuid?.() === 0) await chown(workspaceRoot, TRACE_OWNER.uid, TRACE_OWNER.gid);
const backend = await createDockerBackend({ warmPool: 0 });
const session = await backend.openSession({ sessionId: `bench-policy-${process.pid}`, workspaceRoot });
try {
  const corpus = new BashCorpus(Number(values.seed)).commands(count);
  const started = performance.now();
  const result = await runDifferential(session, workspaceRoot, corpus);
  console.log(
    `generated ${result.generated}, agreed ${result.agreed}, cannot be judged ${result.unjudgeable}, disagreed ${result.disagreements.length} (seed ${values.seed}, ${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
  for (const disagreement of result.disagreements) console.log(`DISAGREEMENT ${JSON.stringify(disagreement)}`);
  process.exitCode = result.disagreements.length > 0 ? 1 : 0;
} finally {
  await session.close();
  await backend.close();
  await rm(workspaceRoot, { recursive: true, force: true, maxRetries: 5 });
}
