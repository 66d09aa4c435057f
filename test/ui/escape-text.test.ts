import test from 'ava';
import { escapeCell, escapeText, terminalJson } from '../../src/ui/escape-text.js';

/** Anything a terminal acts on or draws as nothing: what must never be printed raw. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point.
const RAW = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u;

const HOSTILE: Array<[string, string]> = [
  ['ESC CSI erase line and cursor up', 'alice\x1b[2K\x1b[1A\rmallory'],
  ['C1 CSI (U+009B)', 'alice\u009b2Kx'],
  ['OSC 52 clipboard write, BEL-terminated', '\x1b]52;c;ZWNobyBwd25lZA==\x07'],
  ['newline forging a row', 'alice\nacme      forged'],
  ['right-to-left override', 'alice\u202eecilA'],
  ['zero-width space and joiner', 'al\u200bi\u200dce'],
  ['line and paragraph separators', 'a\u2028b\u2029c'],
  ['next line (U+0085)', 'a\u0085b'],
  ['no-break and ideographic spaces', 'a\u00a0b\u3000c'],
  ['byte order mark', '\ufeffalice'],
  ['a lone surrogate', 'a\ud800b'],
  ['a tag character (outside the BMP)', 'a\u{e0041}b'],
];

test('escapeText leaves no character a terminal acts on, for each hostile form', (t) => {
  for (const [name, text] of HOSTILE) {
    const escaped = escapeText(text);
    t.false(RAW.test(escaped), `${name}: ${JSON.stringify(escaped)}`);
    t.false(/[\ud800-\udfff]/u.test(escaped.replace(/[\u{10000}-\u{10ffff}]/gu, '')), name);
    t.not(escaped, text, name);
  }
  t.is(escapeText('alice\x1b[2K\rbob\n'), 'alice\\x1b[2K\\rbob\\n');
  t.is(escapeText('a\u202eb'), 'a\\u202eb');
  t.is(escapeText('a\u{e0041}'), 'a\\u{e0041}');
});

test('escapeText keeps plain and non-Latin text as it is, and two different values never print the same', (t) => {
  for (const plain of ['alice', 'user-42@example.com', 'Zoë Åström', '山田太郎', 'مرحبا', 'key id xfyjbplgwndk', '😀']) t.is(escapeText(plain), plain);
  // A backslash is escaped too, so the text "\x1b" and the character ESC differ.
  t.is(escapeText('\\x1b'), '\\\\x1b');
  t.not(escapeText('\\x1b'), escapeText('\x1b'));
});

test('escapeCell quotes what is empty or holds a space or a quote, so one value cannot pass for several columns', (t) => {
  t.is(escapeCell('alice'), 'alice');
  t.is(escapeCell(''), '""');
  t.is(escapeCell('bob  12s  3'), '"bob  12s  3"');
  t.is(escapeCell('say "hi"'), '"say \\"hi\\""');
  t.is(escapeCell('a\tb'), 'a\\tb');
});

test('terminalJson is the same JSON to a parser, with nothing raw a terminal acts on', (t) => {
  for (const [name, text] of HOSTILE) {
    const value = { subject: text, list: [text] };
    const json = terminalJson(value);
    // Pretty JSON's own line breaks are its layout, not part of a value.
    t.false(RAW.test(json.replace(/\n/g, ' ')), `${name}: ${json}`);
    t.deepEqual(JSON.parse(json), value, name);
  }
  t.is(terminalJson({ a: 1 }, 0), '{"a":1}');
});
