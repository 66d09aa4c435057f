import test from 'ava';
import xterm from '@xterm/headless';
import { EscapeCountClamp } from '../../src/shell/output/escape-count-clamp.js';

const COLS = 40;
const ROWS = 10;

function clamp(...pieces: string[]): string {
  const filter = new EscapeCountClamp({ cols: COLS, rows: ROWS });
  return pieces.map((piece) => filter.push(piece)).join('') + filter.flush();
}

/** What a raw xterm of the same size shows (screen rows and cursor) after `text`. */
async function screenOf(text: string): Promise<string> {
  const terminal = new xterm.Terminal({ cols: COLS, rows: ROWS, scrollback: 0, allowProposedApi: true, logLevel: 'off' });
  await new Promise<void>((resolve) => terminal.write(text, resolve));
  const buffer = terminal.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < ROWS; y++) rows.push(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '');
  terminal.dispose();
  return `${rows.join('|')} @${buffer.cursorX},${buffer.cursorY}`;
}

const fill = Array.from({ length: ROWS }, (_, i) => `row ${i} ${'abcdefghij'.repeat(3)}`).join('\r\n');

test('counts past the screen height are lowered to it for scroll, insert and delete line', (t) => {
  for (const final of ['S', 'T', 'L', 'M', 'A']) t.is(clamp(`\x1b[999999999${final}`), `\x1b[${ROWS}${final}`, final);
});

test('counts past the screen width are lowered to it for tabs, character and column edits, and horizontal scroll', (t) => {
  for (const final of ['I', 'Z', '@', 'P', 'X']) t.is(clamp(`\x1b[999999999${final}`), `\x1b[${COLS}${final}`, final);
  t.is(clamp("\x1b[999999999'}"), `\x1b[${COLS}'}`);
  t.is(clamp('\x1b[999999999 A'), `\x1b[${COLS} A`);
  t.is(clamp('\x1b[999999999 @'), `\x1b[${COLS} @`);
});

test('a repeat count past a screenful keeps a screenful, and the count modulo the width', (t) => {
  t.is(clamp('x\x1b[100000000b'), `x\x1b[${COLS * ROWS + (100_000_000 % COLS)}b`);
  t.is(clamp('x\x1b[12b'), 'x\x1b[12b');
});

test('clamping changes nothing a terminal shows', async (t) => {
  const attacks = [
    '\x1b[5;3H\x1b[5000S',
    '\x1b[5;3H\x1b[5000T',
    '\x1b[5;3H\x1b[5000L',
    '\x1b[5;3H\x1b[5000M',
    '\x1b[3;8r\x1b[5;3H\x1b[5000S',
    '\x1b[5;3H\x1b[5000I',
    '\x1b[5;30H\x1b[5000Z',
    '\x1b[5;3H\x1b[5000@',
    '\x1b[5;3H\x1b[5000P',
    '\x1b[5;3H\x1b[5000X',
    "\x1b[5;3H\x1b[5000'}",
    "\x1b[5;3H\x1b[5000'~",
    '\x1b[5;3H\x1b[5000 @',
    '\x1b[5;3H\x1b[5000 A',
    '\x1b[5;3H\x1b[5000A',
    '\x1b[5;3Hy\x1b[5003b',
    '\x1b[5;3H\u00e9\x1b[4321b',
    '\x1b[?7l\x1b[5;3Hz\x1b[5000b',
  ];
  for (const attack of attacks) {
    const original = `${fill}${attack}!`;
    t.is(await screenOf(clamp(original)), await screenOf(original), JSON.stringify(attack));
  }
});

test('other sequences, and counts within the screen, pass unchanged', (t) => {
  for (const text of [
    '\x1b[1;31mred\x1b[0m',
    '\x1b[?1049h\x1b[?2004l',
    '\x1b[38;2;255;128;0m',
    '\x1b[999;999H',
    '\x1b[5S\x1b[39C',
    '\x1b]0;title\x07',
    'plain\ttext\r\n',
  ]) {
    t.is(clamp(text), text);
  }
});

test('a sequence split across pieces is held until it ends, then clamped', (t) => {
  t.is(clamp('before \x1b', '[9999', '99', '999S after'), `before \x1b[${ROWS}S after`);
  t.is(clamp('\x9b99999', '9L'), `\x9b${ROWS}L`);
});

test('leading zeros and overlong numbers cannot make it buffer: numbers come out in normal form', (t) => {
  t.is(clamp(`\x1b[${'0'.repeat(100_000)}7m`), '\x1b[7m');
  t.is(clamp(`\x1b[${'9'.repeat(100_000)}m`), `\x1b[${0x7fffffff}m`);
  const manyParams = clamp(`\x1b[${'1;'.repeat(50_000)}m`);
  t.true(manyParams.length < 200, `${manyParams.length} characters`);
});

test('C0 controls inside a sequence run in place; CAN, SUB and ESC abort it unchanged', async (t) => {
  const withNewline = '\x1b[99\n9999S';
  t.is(await screenOf(`${fill}${clamp(withNewline)}`), await screenOf(`${fill}${withNewline}`));
  t.is(clamp('\x1b[99999999\x18S'), '\x1b[99999999\x18S');
  t.is(clamp('\x1b[99999999\x1b[99999999S'), `\x1b[99999999\x1b[${ROWS}S`);
  t.is(clamp('\x1b[99999999\x9b99999999S'), `\x1b[99999999\x9b${ROWS}S`);
});

test('a sequence xterm ignores (a marker after parameters) is passed on as it came', (t) => {
  t.is(clamp('\x1b[1?999999999S'), '\x1b[1?999999999S');
  t.is(clamp('\x1b[ 9999S'), '\x1b[ 9999S');
});

test('an unfinished sequence at the end is passed on by flush', (t) => {
  t.is(clamp('abc\x1b[12;'), 'abc\x1b[12;');
});
