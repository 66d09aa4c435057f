/**
 * `toolcell sandbox build` on a terminal: finished steps stay as lines with
 * their time, one live region shows the running step and its last line, and
 * nothing is drawn in place when the stream is not a terminal.
 */
import test from 'ava';
import { BuildProgressView } from '../../src/ui/build-progress-view.js';

/** What a terminal would show: applies \r, erase-line and cursor-up to a list of lines. */
function screen(written: string): string[] {
  const rows: string[] = [''];
  let row = 0;
  // eslint-disable-next-line no-control-regex
  for (const token of written.split(/(\r|\n|\x1b\[2K|\x1b\[1A)/)) {
    if (token === '\r' || token === '') continue;
    if (token === '\n') {
      row += 1;
      rows[row] ??= '';
    } else if (token === '\x1b[2K') rows[row] = '';
    else if (token === '\x1b[1A') row = Math.max(0, row - 1);
    else rows[row] = (rows[row] ?? '') + token;
  }
  const shown = rows.map((line) => line.trimEnd());
  while (shown.length > 0 && shown[shown.length - 1] === '') shown.pop();
  return shown;
}

function terminal(): { stream: { isTTY: true; columns: number; write(text: string): void }; text: () => string } {
  let written = '';
  return { stream: { isTTY: true, columns: 100, write: (text: string) => void (written += text) }, text: () => written };
}

test('on a terminal: finished steps stay with their times, the running one is live with its latest output', (t) => {
  let now = 0;
  const { stream, text } = terminal();
  const view = new BuildProgressView({ stream, now: () => now, tickMs: 0 });
  view.event({ type: 'phase', phase: 'image', message: 'building toolcell-sandbox:abc from toolcell-base:bookworm' });
  view.event({ type: 'step', index: 1, total: 2, instruction: 'FROM toolcell-base:bookworm' });
  now = 300;
  view.event({ type: 'step', index: 2, total: 2, instruction: 'RUN apt-get update' });
  now = 12_700;
  view.event({ type: 'output', line: 'Get:1 http://deb.debian.org bookworm InRelease' });
  t.deepEqual(screen(text()), [
    'building toolcell-sandbox:abc from toolcell-base:bookworm',
    '✓ step 1/2: FROM toolcell-base:bookworm 0.3 s',
    '› [0:12] step 2/2: RUN apt-get update',
    '  Get:1 http://deb.debian.org bookworm InRelease',
  ]);
  now = 20_000;
  view.event({ type: 'done', tag: 'toolcell-sandbox:abc', sizeBytes: 354_000_000, durationMs: 20_000 });
  view.close();
  t.deepEqual(screen(text()), [
    'building toolcell-sandbox:abc from toolcell-base:bookworm',
    '✓ step 1/2: FROM toolcell-base:bookworm 0.3 s',
    '✓ step 2/2: RUN apt-get update 19.7 s',
    '✓ built toolcell-sandbox:abc, 354 MB, in 20.0 s',
  ]);
});

test('a phase without steps (the debootstrap base) ends with a tick and its time', (t) => {
  let now = 0;
  const { stream, text } = terminal();
  const view = new BuildProgressView({ stream, now: () => now, tickMs: 0 });
  view.event({ type: 'phase', phase: 'base', message: 'building the base' });
  view.event({ type: 'output', line: 'I: Retrieving libc6 2.36' });
  t.deepEqual(screen(text()), ['› [0:00] building the base', '  debootstrap: Retrieving libc6 2.36']);
  now = 58_000;
  view.event({ type: 'phase', phase: 'image', message: 'building toolcell-sandbox:abc' });
  view.close();
  t.deepEqual(screen(text()), ['✓ building the base 58.0 s']);
});

test('escape sequences in builder output are not passed to the terminal', (t) => {
  const { stream, text } = terminal();
  const view = new BuildProgressView({ stream, now: () => 0, tickMs: 0 });
  view.event({ type: 'step', index: 1, total: 1, instruction: 'RUN x' });
  view.event({ type: 'output', line: 'evil \x1b]52;c;ZWNobyBoaQ==\x07 \x1b[2J tail' });
  t.false(text().includes('\x1b]52'), 'no OSC 52');
  t.false(text().includes('\x1b[2J'), 'no screen clear');
  view.close();
});

test('not a terminal: plain lines, no cursor movement', (t) => {
  let written = '';
  const view = new BuildProgressView({ stream: { write: (chunk: string) => void (written += chunk) }, now: () => 0 });
  view.event({ type: 'step', index: 1, total: 1, instruction: 'RUN x' });
  view.event({ type: 'output', line: 'hidden unless verbose' });
  view.close();
  t.is(written, '[0:00] step 1/1: RUN x\n');
});
