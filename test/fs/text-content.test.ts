import test from 'ava';
import { looksBinary } from '../../src/fs/binary-content.js';
import { inlineMediaType } from '../../src/fs/media-types.js';
import { decodeText, encodeText, type TextEncodingName } from '../../src/fs/text-encoding.js';
import { selectLines } from '../../src/tools/builtin/text-lines.js';

test('NUL bytes or many control characters make content binary', (t) => {
  t.true(looksBinary(Buffer.from([0x41, 0x00, 0x42])));
  t.true(looksBinary(Buffer.from([1, 2, 3, 4, 5, 0x41])));
  t.false(looksBinary(Buffer.from('plain text\twith tabs\r\n')));
  t.false(looksBinary(Buffer.from('ünïcödé ✓', 'utf8')));
  t.false(looksBinary(Buffer.alloc(0)));
});

test('UTF-16 text with a BOM is not binary despite its NUL bytes', (t) => {
  t.false(looksBinary(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('abc', 'utf16le')])));
});

test('only the first 4096 bytes are sniffed', (t) => {
  t.false(looksBinary(Buffer.concat([Buffer.alloc(4096, 0x61), Buffer.from([0])])));
});

for (const encoding of ['utf8', 'utf8-bom', 'utf16le', 'utf16be'] as TextEncodingName[]) {
  test(`${encoding} text round-trips with its encoding`, (t) => {
    const decoded = decodeText(encodeText('héllo\nwörld', encoding));
    t.deepEqual(decoded, { text: 'héllo\nwörld', encoding });
  });
}

test('media types come from the extension, case-insensitively', (t) => {
  t.is(inlineMediaType('/a/B.JPG'), 'image/jpeg');
  t.is(inlineMediaType('x.pdf'), 'application/pdf');
  t.is(inlineMediaType('icon.svg'), undefined);
  t.is(inlineMediaType('Makefile'), undefined);
});

test('selectLines handles empty text and a missing final newline', (t) => {
  t.like(selectLines(''), { content: '', totalLines: 0, partial: false });
  t.like(selectLines('a\nb'), { content: 'a\nb', totalLines: 2 });
  t.like(selectLines('a\nb\nc\n', { startLine: 2 }), { content: 'b\nc', firstLine: 2, lastLine: 3, partial: true });
  t.throws(() => selectLines('a\n', { startLine: 3 }), { instanceOf: RangeError });
});
