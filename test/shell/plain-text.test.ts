import test from 'ava';
import { countLineFeeds } from '../../src/shell/output/count-line-feeds.js';
import { PlainTextFilter } from '../../src/shell/output/plain-text.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The filter's whole output for `input`, fed in pieces of `size` bytes. */
function plain(input: string | Uint8Array, size = Number.MAX_SAFE_INTEGER): string {
  const bytes = typeof input === 'string' ? encode(input) : input;
  const filter = new PlainTextFilter();
  let out = '';
  for (let i = 0; i < bytes.length; i += size) out += filter.push(bytes.subarray(i, i + size));
  return out + filter.end();
}

test('colours, cursor and mode changes, titles and other escape strings are removed', (t) => {
  t.is(plain('\x1b[1;31mred\x1b[0m \x1b[?25lplain\x1b[?25h\n'), 'red plain\n');
  t.is(plain('\x1b]0;window title\x07a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b\n'), 'alinkb\n');
  t.is(plain('\x1bPq#0;2;0;0;0#0~~@@\x1b\\after\n'), 'after\n');
  t.is(plain('\x1b(Bx\x1b7y\x1b8z\x1bM\n'), 'xyz\n');
  t.is(plain('\x9b31mc1\x9b0m\n'), 'c1\n');
  t.is(plain('bell\x07 and nul\x00\n'), 'bell and nul\n');
});

test('\\r returns to the start of the line and later text overwrites: a progress bar keeps its last state', (t) => {
  t.is(plain('progress 10%\rprogress 55%\rprogress 100%\n'), 'progress 100%\n');
  t.is(plain('abcdef\rXY\n'), 'XYcdef\n');
  t.is(plain('windows\r\nline\r\n'), 'windows\nline\n');
  t.is(plain('\r\x1b[2K 3/10\r\x1b[2K10/10\n'), '10/10\n');
  t.is(plain('abcdef\r\x1b[3Cx\x1b[K\n'), 'abcx\n');
  t.is(plain('ab\x08\x08XY\n'), 'XY\n');
  t.is(plain('\x1b[5Gcol5\n'), '    col5\n');
});

test('every line feed makes one line, even inside an unfinished sequence: line N of the output is line N of the text', (t) => {
  t.is(plain('one\n\x1b[12\ntwo\n\x1b]0;open title\nthree\n'), 'one\n\ntwo\n\nthree\n');
  const noisy = encode('a\x1b[3\x1b]x\n\x1bP\n\r\n\x9b\nb\n\x1b(\n');
  t.is(countLineFeeds(encode(plain(noisy))), countLineFeeds(noisy));
});

test('a stray ESC ] without its end does not hide the rest of the output', (t) => {
  const out = plain(`\x1b]${'x'.repeat(70 * 1024)}visible`);
  t.true(out.endsWith('visible'), out.slice(-40));
});

test('sequences and UTF-8 characters split across chunks are put back together', (t) => {
  const input = 'caf\u00e9 \x1b[1;32mgr\u00fcn\x1b[0m \u{1f600}\r\u00e9t\u00e9\n\x1b]0;title\x1b\\end\n';
  const whole = plain(input);
  t.is(whole, '\u00e9t\u00e9\u00e9 gr\u00fcn \u{1f600}\nend\n');
  for (const size of [1, 2, 3, 5]) t.is(plain(input, size), whole, `pieces of ${size}`);
});

test('a last line without a line feed comes out at the end; invalid UTF-8 shows as U+FFFD', (t) => {
  t.is(plain('first\nlast'), 'first\nlast');
  t.is(plain(Uint8Array.of(0x63, 0x61, 0x66, 0xe9, 0x0a)), 'caf\ufffd\n');
});

test('an over-long line is passed on in pieces that join into the same line', (t) => {
  const filter = new PlainTextFilter();
  const long = 'y'.repeat(200 * 1024);
  const first = filter.push(encode(long));
  t.true(first.length > 0, 'the line was passed on before its line feed came');
  t.is(first + filter.push(encode('\nnext\n')) + filter.end(), `${long}\nnext\n`);
});

test('line feeds are counted in any alignment and mix of bytes', (t) => {
  const bytes = new Uint8Array(4099);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 5 === 0 ? 0x0a : (i * 31) % 256;
  const slow = (part: Uint8Array): number => part.reduce((n, byte) => n + (byte === 0x0a ? 1 : 0), 0);
  for (const [start, end] of [
    [0, 4099],
    [1, 4099],
    [2, 4098],
    [3, 7],
    [5, 5],
  ] as const) {
    const part = bytes.subarray(start, end);
    t.is(countLineFeeds(part), slow(part), `${start}..${end}`);
  }
  t.is(countLineFeeds(encode('\n\n\n\n\n')), 5);
});
