import test from 'ava';
import { liveDelta } from '../../src/ui/headless/live-delta.js';

test('the first snapshot is all new', (t) => {
  t.is(liveDelta('', 'one\ntwo'), 'one\ntwo');
});

test('new lines, and more text on the last line, are what is new', (t) => {
  t.is(liveDelta('one', 'one\ntwo'), '\ntwo');
  t.is(liveDelta('one\ntw', 'one\ntwo\nthree'), 'o\nthree');
  // Pipes keep the final newline: the next line starts a fresh one.
  t.is(liveDelta('one\n', 'one\ntwo\n'), 'two\n');
});

test('a window that scrolled is aligned on the lines it shares with the last one', (t) => {
  // Snapshots of the last three lines.
  t.is(liveDelta('a\nb\nc', 'c\nd\ne'), '\nd\ne');
  t.is(liveDelta('1\n2\n3', '2\n3\n4'), '\n4');
});

test('repeated lines: the longest overlap wins, so nothing is said twice', (t) => {
  t.is(liveDelta('x\nx', 'x\nx\nx'), '\nx');
  t.is(liveDelta('a\nb\na\nb', 'a\nb\na\nb\na'), '\na');
});

test('a line redrawn in place (a progress bar) comes back after a carriage return', (t) => {
  t.is(liveDelta('downloading 10%', 'downloading 20%'), '\rdownloading 20%');
  t.is(liveDelta('step 1\nprogress 10%', 'step 1\nprogress 90%\ndone'), '\rprogress 90%\ndone');
});

test('a snapshot that shares nothing with the last one follows it on a new line', (t) => {
  t.is(liveDelta('1\n2\n3', '7\n8\n9'), '\n7\n8\n9');
});

test('deltas, concatenated, rebuild a growing output', (t) => {
  const output = Array.from({ length: 40 }, (_, i) => `line ${i % 7}`).join('\n');
  let shown = '';
  let previous = '';
  // Snapshots of the last 10 lines, taken every few characters (mid-line too).
  for (let end = 3; end <= output.length; end += 13) {
    const snapshot = output.slice(0, end).split('\n').slice(-10).join('\n');
    shown += liveDelta(previous, snapshot);
    previous = snapshot;
  }
  const last = output.split('\n').slice(-10).join('\n');
  shown += liveDelta(previous, last);
  t.is(shown, output);
});
