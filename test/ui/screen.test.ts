import test from 'ava';
import xterm from '@xterm/headless';
import { type LiveView, Screen } from '../../src/ui/chat/screen.js';

/** A Screen drawing into a headless xterm, as a real terminal would show it. */
function terminalScreen(options: { cols?: number; rows?: number } = {}) {
  const cols = options.cols ?? 40;
  const rows = options.rows ?? 8;
  const term = new xterm.Terminal({ cols, rows, scrollback: 1000, allowProposedApi: true });
  let pending = Promise.resolve();
  const output = {
    isTTY: true,
    columns: cols,
    rows,
    write(data: string) {
      pending = pending.then(() => new Promise<void>((resolve) => term.write(data, resolve)));
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  let view: LiveView = { lines: [] };
  const screen = new Screen({ output, view: () => view, throttleMs: 0 });
  const all = async () => {
    await pending;
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? '');
    while (lines.length > 0 && lines.at(-1) === '') lines.pop();
    return lines;
  };
  return { screen, setView: (next: LiveView) => (view = next), all, term };
}

test('the live region is redrawn in place: updates replace it, nothing piles up in the scrollback', async (t) => {
  const { screen, setView, all } = terminalScreen();
  for (let i = 1; i <= 5; i++) {
    setView({ lines: [`running: step ${i}`, 'status bar'] });
    screen.render();
  }
  t.deepEqual(await all(), ['running: step 5', 'status bar']);
});

test('printed text goes above the region and stays; the region follows it', async (t) => {
  const { screen, setView, all } = terminalScreen();
  setView({ lines: ['> ', 'status'] });
  screen.render();
  screen.print('first');
  screen.print('second');
  t.deepEqual(await all(), ['first', 'second', '> ', 'status']);
});

test('streamed text is word-wrapped into the scrollback; its unfinished line shows in the region', async (t) => {
  const { screen, setView, all } = terminalScreen({ cols: 20 });
  setView({ lines: ['status'] });
  screen.render();
  screen.streamText('The quick brown fox jumps over');
  screen.streamText(' the lazy dog');
  t.is(screen.pendingText, 'dog');
  setView({ lines: [screen.pendingText, 'status'] });
  screen.render();
  t.deepEqual(await all(), ['The quick brown fox', 'jumps over the lazy', 'dog', 'status']);
  setView({ lines: ['status'] });
  screen.endText();
  t.deepEqual(await all(), ['The quick brown fox', 'jumps over the lazy', 'dog', 'status']);
});

test('a region taller than the screen keeps its bottom lines and long lines are cut', async (t) => {
  const { screen, setView, all } = terminalScreen({ cols: 20, rows: 4 });
  setView({ lines: ['a', 'b', 'c', 'd', 'e', 'a line that is far too long for twenty columns'] });
  screen.render();
  setView({ lines: ['x', 'y'] });
  screen.render();
  t.deepEqual(await all(), ['x', 'y']);
  setView({ lines: ['a line that is far too long for twenty columns'] });
  screen.render();
  t.deepEqual(await all(), ['a line that is far…']);
});

test('the cursor is placed where the view asks (the input line)', async (t) => {
  const { screen, setView, all, term } = terminalScreen();
  setView({ lines: ['> hello', 'status'], cursor: { row: 0, col: 4 } });
  screen.render();
  await all();
  t.is(term.buffer.active.cursorX, 4);
  t.is(term.buffer.active.cursorY, 0);
});

test('without a terminal nothing is redrawn and text is written as is', (t) => {
  let written = '';
  const output = { isTTY: false, write: (data: string) => ((written += data), true) } as unknown as NodeJS.WriteStream;
  const screen = new Screen({ output, view: () => ({ lines: ['live'] }), throttleMs: 0 });
  screen.render();
  screen.streamText('partial');
  screen.print('line');
  t.is(written, 'partial\nline\n');
});
