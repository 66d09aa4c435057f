import test from 'ava';
import { breakLine, formatBytes, textWidth, truncateToWidth } from '../../src/ui/text-width.js';
import { stripVTControlCharacters } from 'node:util';
import { colorEnabled, createStyle } from '../../src/ui/style.js';

test('width counts wide characters twice and ignores escapes', (t) => {
  t.is(textWidth('abc'), 3);
  t.is(textWidth('日本'), 4);
  t.is(textWidth('\x1b[32mok\x1b[39m'), 2);
  // Ranges a hand-written table missed: U+2600-27BF symbols that are emoji by default, and one
  // grapheme built of several code points (a family emoji joined by ZWJs).
  t.is(textWidth('\u2614\u26a1'), 4);
  t.is(textWidth('\u{1f468}\u200d\u{1f469}\u200d\u{1f467}'), 2);
});

test('truncation never cuts a grapheme in half', (t) => {
  const family = '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}';
  t.is(truncateToWidth(`ab${family}cd`, 4), `ab…\x1b[0m`);
  t.is(truncateToWidth(`ab${family}cd`, 5), `ab${family}…\x1b[0m`);
});

test('truncation keeps colours balanced and marks the cut', (t) => {
  const cut = truncateToWidth('\x1b[32mgreen text here\x1b[39m', 8);
  t.is(stripVTControlCharacters(cut), 'green t…');
  t.true(cut.endsWith('\x1b[0m'));
  t.is(truncateToWidth('short', 8), 'short');
});

test('lines break at the last space that fits, or hard when there is none', (t) => {
  t.deepEqual(breakLine('hello brave new world', 12), ['hello brave', 'new world']);
  t.deepEqual(breakLine('abcdefghij', 4), ['abcd', 'efghij']);
  t.is(breakLine('fits', 10), undefined);
});

test('bytes are human-readable', (t) => {
  t.is(formatBytes(512), '512 B');
  t.is(formatBytes(1536), '1.5 KB');
  t.is(formatBytes(3 * 1024 * 1024), '3.0 MB');
});

test('colour only on a terminal, never with NO_COLOR, forced by FORCE_COLOR', (t) => {
  t.true(colorEnabled({ isTTY: true }, {}));
  t.false(colorEnabled({ isTTY: false }, {}));
  t.false(colorEnabled({ isTTY: true }, { NO_COLOR: '1' }));
  t.true(colorEnabled({ isTTY: false }, { FORCE_COLOR: '1' }));
  t.is(createStyle(false).red('x'), 'x');
  t.is(createStyle(true).red('x'), '\x1b[31mx\x1b[39m');
});
