/**
 * bench/cli-start: what starting the CLI costs, beside starting Node itself.
 *
 * Each case (`--version`, `--help`, `exec --help`, and `exec` of an empty
 * batch with `--sandbox none`, which builds the whole runtime: settings, the
 * worker pool, the registry) is run `--runs` times, interleaved with
 * `node -e 0` so both see the same machine; prints the median wall time and
 * CPU time (user + system, the process and its threads) of each, and each
 * case's ratio to Node's own start. `--cli PATH` measures another build's
 * `dist/src/cli/bin.js` the same way, e.g. the previous commit's, to compare
 * two builds side by side: give both in one run with `--baseline-cli PATH`.
 *
 *   npm run bench:cli-start -- [--runs N] [--cli PATH] [--baseline-cli PATH]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { cliPath } from '../test/helpers/cli.js';
import { percentile, sortNumbers } from './stats.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '15' }, cli: { type: 'string' }, 'baseline-cli': { type: 'string' } },
});
const runs = Number(values.runs);
const clis: Array<[label: string, path: string]> = [['this build', resolve(values.cli ?? cliPath)]];
if (values['baseline-cli'] !== undefined) clis.push(['baseline build', resolve(values['baseline-cli'])]);

interface Case {
  name: string;
  args: (cli: string) => string[];
  stdin?: string;
}

const CASES: Case[] = [
  { name: 'node -e 0', args: () => ['-e', '0'] },
  { name: '--version', args: (cli) => [cli, '--version'] },
  { name: '--help', args: (cli) => [cli, '--help'] },
  { name: 'exec --help', args: (cli) => [cli, 'exec', '--help'] },
  { name: 'exec [] --sandbox none', args: (cli) => [cli, 'exec', '--sandbox', 'none'], stdin: '[]' },
];

/** Runs one process to its end: wall ms and CPU ms (user + system, its threads included), or throws on a non-zero exit. */
function runOnce(args: string[], cwd: string, stdin: string | undefined): Promise<{ wallMs: number; cpuMs: number }> {
  const started = performance.now();
  // bash's `time` reports the child's CPU (user, system), which Node does not give for a child.
  const child = spawn('bash', ['-c', 'TIMEFORMAT="%3U %3S"; time "$@" >/dev/null', 'bench', process.execPath, ...args], {
    cwd,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  child.stdin.end(stdin ?? '');
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      const last = stderr.trim().split('\n').at(-1) ?? '';
      const [user, system] = last.split(' ').map(Number);
      if (code !== 0 || user === undefined || system === undefined || Number.isNaN(user + system)) {
        reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`));
        return;
      }
      resolvePromise({ wallMs, cpuMs: (user + system) * 1000 });
    });
  });
}

const workspace = await mkdtemp(join(tmpdir(), 'toolcell-bench-cli-'));
try {
  const samples = new Map<string, { wall: number[]; cpu: number[] }>();
  const key = (cli: string, name: string): string => (name === 'node -e 0' ? name : `${cli}: ${name}`);
  for (let round = 0; round < runs; round++) {
    for (const [label, path] of clis) {
      for (const each of CASES) {
        if (each.name === 'node -e 0' && label !== clis[0]![0]) continue;
        const { wallMs, cpuMs } = await runOnce(each.args(path), workspace, each.stdin);
        const entry = samples.get(key(label, each.name)) ?? { wall: [], cpu: [] };
        entry.wall.push(wallMs);
        entry.cpu.push(cpuMs);
        samples.set(key(label, each.name), entry);
      }
    }
  }
  const median = (list: number[]): number => percentile(sortNumbers([...list]), 50);
  const node = samples.get('node -e 0')!;
  const nodeWall = median(node.wall);
  const nodeCpu = median(node.cpu);
  console.log(`CLI start-up, ${runs} runs each, interleaved (median; ratio to node -e 0 in the same run)`);
  for (const [name, entry] of samples) {
    const wall = median(entry.wall);
    const cpu = median(entry.cpu);
    console.log(
      `  ${name.padEnd(40)} wall ${wall.toFixed(0).padStart(5)} ms (${(wall / nodeWall).toFixed(1)}×)   CPU ${cpu.toFixed(0).padStart(5)} ms (${(cpu / nodeCpu).toFixed(1)}×)`,
    );
  }
  if (clis.length === 2) {
    console.log('this build against the baseline build, same run (median CPU ratio):');
    for (const each of CASES.filter((c) => c.name !== 'node -e 0')) {
      const mine = median(samples.get(key(clis[0]![0], each.name))!.cpu);
      const theirs = median(samples.get(key(clis[1]![0], each.name))!.cpu);
      console.log(`  ${each.name.padEnd(28)} ${(mine / theirs).toFixed(2)}× (${mine.toFixed(0)} ms against ${theirs.toFixed(0)} ms)`);
    }
  }
} finally {
  await rm(workspace, { recursive: true, force: true });
}
