import test from 'ava';
import { OutputPipeline, type OutputLimits } from '../../src/shell/output/output-pipeline.js';

const limits: OutputLimits = {
  maxBytes: 8 * 1024 * 1024,
  tailBytes: 4096,
  sniffBytes: 4096,
  headChars: 10_000,
  tailChars: 10_000,
  liveIntervalMs: 1000,
  liveLines: 20,
  cols: 80,
  rows: 24,
  scrollback: 200,
};
const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

test('output past the byte cap keeps its start and its end, with a note between', async (t) => {
  const pipeline = new OutputPipeline({ mode: 'pty', limits: { ...limits, maxBytes: 1000 } });
  for (let i = 0; i < 1000; i++) pipeline.push(encode(`line ${i}\n`));
  const result = await pipeline.finish();
  t.true(result.truncated);
  t.true(result.output.startsWith('line 0\nline 1\n'));
  t.true(result.output.endsWith('line 998\nline 999'));
  t.regex(result.output, /\[\.\.\. output truncated: the command wrote 8890 bytes/);
});

test('when escape sequences exhaust the render budget, the result says so and still shows the end', async (t) => {
  const pipeline = new OutputPipeline({ mode: 'pty', limits: { ...limits, renderBudgetMs: 50 } });
  pipeline.push(encode('started\n'));
  // About a minute of emulation in 2 MB, then ordinary lines: the end must still be shown.
  const resets = encode('\x1bc'.repeat(1024));
  for (let i = 0; i < 1024; i++) pipeline.push(resets);
  let afterBytes = 0;
  for (let i = 0; i < 2000; i++) {
    const line = encode(`after ${i}\n`);
    afterBytes += line.length;
    pipeline.push(line);
  }
  const result = await pipeline.finish();
  t.true(result.truncated);
  t.is(result.totalBytes, 8 + 2 * 1024 * 1024 + afterBytes);
  t.regex(result.output, /escape sequences took more than 0\.05 s to render; what was rendered is shown above and the end below/);
  t.true(result.output.endsWith('after 1998\nafter 1999'), result.output.slice(-80));
});

test('a command with no output gives empty text; output after dispose is ignored', async (t) => {
  const silent = new OutputPipeline({ mode: 'pty', limits });
  t.like(await silent.finish(), { output: '', totalBytes: 0, truncated: false, binary: null });
  const dropped = new OutputPipeline({ mode: 'pty', limits });
  dropped.dispose();
  dropped.push(encode('late\n'));
  t.is(dropped.totalBytes, 0);
});
