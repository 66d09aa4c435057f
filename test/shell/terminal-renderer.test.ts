import test from 'ava';
import { TerminalRenderer } from '../../src/shell/output/terminal-renderer.js';

function render(chunks: string[], options: Partial<ConstructorParameters<typeof TerminalRenderer>[0]> = {}): Promise<string> {
  const renderer = new TerminalRenderer({ cols: 40, rows: 10, scrollback: 100, headChars: 100_000, tailChars: 100_000, ...options });
  for (const chunk of chunks) renderer.write(new TextEncoder().encode(chunk));
  return renderer.finish().finally(() => renderer.dispose());
}

test('carriage returns overwrite: a progress bar renders as its last state', async (t) => {
  t.is(await render(['downloading  10%\r', 'downloading  60%\r', 'downloading 100%\n', 'done\n']), 'downloading 100%\ndone');
});

test('ANSI colours and cursor movement disappear from the text', async (t) => {
  t.is(await render(['\x1b[1;32mok\x1b[0m \x1b[4munderlined\x1b[24m\n', 'abc\x1b[2Dx\n']), 'ok underlined\naxc');
});

test('bare LF starts a new line at column 0 (the PTY has no output post-processing)', async (t) => {
  t.is(await render(['first\nsecond\n']), 'first\nsecond');
});

test('a line longer than the terminal is joined again, trailing spaces inside kept', async (t) => {
  const long = `${'a'.repeat(39)} ${'b'.repeat(50)}`;
  t.is(await render([`${long}\n`]), long);
});

test('blank lines inside are kept, trailing ones dropped', async (t) => {
  t.is(await render(['a\n\n\nb\n\n\n\n']), 'a\n\n\nb');
});

test('a chunk split inside a UTF-8 character still renders it; invalid bytes show as U+FFFD', async (t) => {
  const euro = new TextEncoder().encode('€\n');
  const renderer = new TerminalRenderer({ cols: 40, rows: 10, scrollback: 100, headChars: 1000, tailChars: 1000 });
  renderer.write(euro.subarray(0, 1));
  renderer.write(euro.subarray(1));
  renderer.write(Uint8Array.from([0x41, 0xff, 0x42]));
  t.is(await renderer.finish(), '€\nA\uFFFDB');
  renderer.dispose();
});

test('output much longer than the scrollback keeps every line up to the budget', async (t) => {
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i}`);
  t.is(await render([lines.join('\n') + '\n']), lines.join('\n'));
});

test('past the head budget, the start and the last screenfuls are kept and the gap is counted', async (t) => {
  const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`);
  const text = await render([lines.join('\n') + '\n'], { headChars: 60 });
  t.true(text.startsWith('line 0\nline 1\n'));
  t.true(text.endsWith('line 19998\nline 19999'));
  t.regex(text, /\[\.\.\. \d+ lines (and \d+ characters )?omitted \.\.\.\]/);
  t.true(text.length < 5000);
});

test('snapshot shows the last lines of what the terminal shows now', async (t) => {
  const renderer = new TerminalRenderer({ cols: 40, rows: 5, scrollback: 100, headChars: 1000, tailChars: 1000 });
  renderer.write(new TextEncoder().encode('one\ntwo\nthree\nfour\n50%\r75%'));
  await renderer.whenIdle();
  t.is(renderer.snapshot(3), 'three\nfour\n75%');
  renderer.dispose();
});

test('a full-screen program left on the alternate screen is shown after the normal text', async (t) => {
  t.is(await render(['before\n', '\x1b[?1049h', '\x1b[Hfull screen']), 'before\nfull screen');
});

test('a billion-line scroll and a hundred-million repeat render at the cost of a screen', async (t) => {
  // Unclamped, the first runs for hours and the second allocates 400 MB: the test would time out.
  const text = await render(['top\n', '\x1b[999999999S\x1b[999999999L\x1b[999999999I', 'x\x1b[100000000b\n', 'end\n']);
  t.regex(text, /^\s+x{400,}\nend$/);
  t.true(text.length < 40 * 10 * 3, `${text.length} characters`);
});

test('past its parse budget the renderer drops the rest, counts it and still finishes', async (t) => {
  // 2 MB of full resets: about a minute of emulation, against a budget of 50 ms.
  const renderer = new TerminalRenderer({ cols: 40, rows: 10, scrollback: 100, headChars: 1000, tailChars: 1000, renderBudgetMs: 50 });
  renderer.write(new TextEncoder().encode('shown first\n'));
  renderer.write(new TextEncoder().encode('\x1bc'.repeat(1024 * 1024)));
  renderer.write(new TextEncoder().encode('written after\n'));
  await renderer.finish();
  t.true(renderer.exhausted);
  t.true(renderer.unrenderedChars > 1024 * 1024, `${renderer.unrenderedChars} characters dropped`);
  renderer.dispose();
});
