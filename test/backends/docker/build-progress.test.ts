/**
 * How a build's progress reads: the builder's stream turned into events,
 * plain lines for logs, and the live terminal view.
 */
import test from 'ava';
import {
  BuildOutputSplitter,
  PlainBuildLog,
  debootstrapStage,
  formatDuration,
  formatElapsed,
  formatImageSize,
  type BuildProgressEvent,
} from '../../../src/backends/docker/build-progress.js';

function split(chunks: string[]): BuildProgressEvent[] {
  const events: BuildProgressEvent[] = [];
  const splitter = new BuildOutputSplitter((event) => events.push(event));
  for (const chunk of chunks) splitter.write(chunk);
  splitter.end();
  return events;
}

test('the classic builder stream becomes step and output events, across chunk boundaries', (t) => {
  const events = split([
    'Step 4/12 : RUN apt-',
    'get update\n ---> Running in 1a2b\nGet:1 http://deb',
    '.debian.org bookworm InRelease\n\n',
    'Step 5/12 : USER sandbox',
  ]);
  t.deepEqual(events, [
    { type: 'step', index: 4, total: 12, instruction: 'RUN apt-get update' },
    { type: 'output', line: ' ---> Running in 1a2b' },
    { type: 'output', line: 'Get:1 http://deb.debian.org bookworm InRelease' },
    { type: 'step', index: 5, total: 12, instruction: 'USER sandbox' },
  ]);
});

test('plain lines: phases and steps with the time since the start; output only when verbose, kept for a failure', (t) => {
  let now = 1_000;
  const lines: string[] = [];
  const log = new PlainBuildLog({ write: (line) => lines.push(line), now: () => now, keepLines: 2 });
  log.event({ type: 'phase', phase: 'image', message: 'building toolcell-sandbox:abc from toolcell-base:bookworm' });
  now += 65_000;
  log.event({ type: 'step', index: 4, total: 12, instruction: 'RUN apt-get update' });
  for (const line of ['one', 'two', 'three']) log.event({ type: 'output', line });
  log.event({ type: 'done', tag: 'toolcell-sandbox:abc', sizeBytes: 354_000_000, durationMs: 71_000 });
  t.deepEqual(lines, [
    '[0:00] building toolcell-sandbox:abc from toolcell-base:bookworm',
    '[1:05] step 4/12: RUN apt-get update',
    '[1:05] built toolcell-sandbox:abc, 354 MB, in 1:11',
  ]);
  t.deepEqual(log.tail(), ['two', 'three'], 'the last lines of the running step');
});

test('plain lines: debootstrap prints one line per stage, not one per package', (t) => {
  const lines: string[] = [];
  const log = new PlainBuildLog({ write: (line) => lines.push(line), now: () => 0 });
  for (const line of [
    'I: Retrieving InRelease',
    'I: Retrieving Packages',
    'I: Retrieving libc6 2.36',
    'I: Validating libc6 2.36',
    'W: something',
    'I: Extracting base-files...',
    'I: Base system installed successfully.',
  ]) {
    log.event({ type: 'output', line });
  }
  t.deepEqual(lines, [
    '[0:00] debootstrap: Retrieving',
    '[0:00] debootstrap: Validating',
    '[0:00] debootstrap: Extracting',
    '[0:00] debootstrap: Base system installed',
  ]);
});

test('verbose plain lines include every output line', (t) => {
  const lines: string[] = [];
  const log = new PlainBuildLog({ write: (line) => lines.push(line), verbose: true, now: () => 0 });
  log.event({ type: 'output', line: 'Get:1 http://deb.debian.org bookworm InRelease' });
  t.deepEqual(lines, ['Get:1 http://deb.debian.org bookworm InRelease']);
});

test('durations, clocks and sizes read as a person expects', (t) => {
  t.is(formatElapsed(0), '0:00');
  t.is(formatElapsed(125_900), '2:05');
  t.is(formatDuration(8_449), '8.4 s');
  t.is(formatDuration(61_000), '1:01');
  t.is(formatImageSize(354_123_456), '354 MB');
  t.is(formatImageSize(1_234_000_000), '1.23 GB');
  t.is(debootstrapStage('I: Unpacking the base system...'), 'Unpacking');
  t.is(debootstrapStage('Get:1 http://x'), undefined);
});
