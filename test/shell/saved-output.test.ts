import test from 'ava';
import { readFileSync } from 'node:fs';
import { abortWhenOutput, useShellSession } from './support.js';
import { firstDifferentLine, seqText } from '../helpers/seq-output.js';

const SEQ_BYTES = 4_088_895;

test('a 600,000-line output is saved whole as it arrives: line N of the file is line N of the output', async (t) => {
  const { session, workspace } = await useShellSession(t);
  const path = workspace.path('.toolcell/tool-outputs/seq.txt');
  const result = await session.run({ command: 'seq 1 600000', saveOutput: { path, afterChars: 40_000 } });
  const file = readFileSync(path, 'utf8');
  t.is(firstDifferentLine(file, seqText(600_000)), undefined);
  t.is(result.totalBytes, SEQ_BYTES);
  t.is(result.totalLines, 600_000);
  t.like(result.savedOutput, { path, bytes: SEQ_BYTES, lines: 600_000, savedLines: 600_000, cut: false });
  // What is kept in memory does not grow with the output: the excerpt is two ends of 40,000 characters.
  t.true(result.savedOutput!.excerpt.length < 81_000, `excerpt of ${result.savedOutput!.excerpt.length} characters`);
  t.true(result.savedOutput!.excerpt.endsWith('599999\n600000\n'));
  t.deepEqual(workspace.list('.toolcell/tool-outputs'), ['seq.txt']);
});

test('a flood past the disk cap: the file keeps whole lines up to the cap, then one line saying where it was cut and what was dropped', async (t) => {
  const { session, workspace } = await useShellSession(t, { service: { savedOutputMaxBytes: 8192 } });
  const path = workspace.path('.toolcell/tool-outputs/flood.txt');
  const result = await session.run({ command: 'yes "$(printf "%089d" 0)" | head -n 50000', saveOutput: { path, afterChars: 1000 } });
  const lines = readFileSync(path, 'utf8').split('\n');
  t.is(lines.pop(), '');
  const closing = lines.pop()!;
  t.true(lines.length >= 8192 / 90 - 1 && lines.length * 90 <= 8192, `${lines.length} lines kept`);
  t.true(lines.every((line) => line === '0'.repeat(89)));
  t.is(
    closing,
    `[... saved output cut here, after line ${lines.length}, at its size cap of 8192 bytes (shell.savedOutputMaxBytes): ${50_000 - lines.length} more lines were not saved (the whole output was 4500000 bytes in 50000 lines) ...]`,
  );
  t.like(result.savedOutput, { path, cut: true, bytes: 4_500_000, lines: 50_000, savedLines: lines.length });
});

test('the file is plain text: colours gone, a progress bar at its last state, one line per line written', async (t) => {
  const { session, workspace } = await useShellSession(t);
  const path = workspace.path('.toolcell/tool-outputs/plain.txt');
  await session.run({
    command: `printf '\\033[1;31mred\\033[0m plain\\n'; printf 'progress 10%%\\rprogress 100%%\\n'; printf '\\033]0;title\\007line %s\\n' $(seq 1 3)`,
    saveOutput: { path, afterChars: 10 },
  });
  t.is(readFileSync(path, 'utf8'), 'red plain\nprogress 100%\nline 1\nline 2\nline 3\n');
});

test('an output under the threshold, or a binary one, leaves no file', async (t) => {
  const { session, workspace } = await useShellSession(t);
  const short = await session.run({ command: 'echo short', saveOutput: { path: workspace.path('.toolcell/tool-outputs/short.txt'), afterChars: 1000 } });
  t.is(short.savedOutput, undefined);
  const binary = await session.run({
    command: 'head -c 300000 /dev/urandom',
    saveOutput: { path: workspace.path('.toolcell/tool-outputs/binary.txt'), afterChars: 1000 },
  });
  t.truthy(binary.binary);
  t.is(binary.savedOutput, undefined);
  t.false(workspace.exists('.toolcell/tool-outputs') && workspace.list('.toolcell/tool-outputs').length > 0, 'no file, no temporary file');
});

test('a cancelled command leaves a finished file that says it was cancelled, and no temporary file', async (t) => {
  const { session, workspace } = await useShellSession(t, { service: { liveUpdateIntervalMs: 0 } });
  const path = workspace.path('.toolcell/tool-outputs/cancelled.txt');
  const { signal, onOutput } = abortWhenOutput(/all-printed/);
  const result = await session.run({ command: 'seq 1 20000; echo all-printed; sleep 60', saveOutput: { path, afterChars: 1000 }, signal, onOutput });
  t.true(result.aborted);
  t.is(readFileSync(path, 'utf8'), `${seqText(20_000)}all-printed\n[... the command was cancelled here ...]\n`);
  t.deepEqual(workspace.list('.toolcell/tool-outputs'), ['cancelled.txt']);
});

test('saveOutput and savedOutputMaxBytes are checked', async (t) => {
  const { session } = await useShellSession(t);
  await t.throwsAsync(session.run({ command: 'true', saveOutput: { path: 'relative.txt', afterChars: 10 } }), {
    instanceOf: TypeError,
    message: /saveOutput\.path/,
  });
  await t.throwsAsync(session.run({ command: 'true', saveOutput: { path: '/tmp/x.txt', afterChars: 0 } }), { instanceOf: RangeError, message: /afterChars/ });
  const { ShellService } = await import('../../src/shell/shell-service.js');
  await t.throwsAsync(ShellService.create({ savedOutputMaxBytes: 10 }), { instanceOf: RangeError, message: /savedOutputMaxBytes/ });
});
