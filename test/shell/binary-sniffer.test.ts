import test from 'ava';
import { BinarySniffer, countInvalidUtf8Bytes, looksBinary } from '../../src/shell/output/binary-sniffer.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

test('text, including multi-byte UTF-8 and ANSI escapes, is not binary', (t) => {
  t.false(looksBinary(bytes('hello wörld — 日本語 😀\n\x1b[31mred\x1b[0m\r\n')));
});

test('a NUL byte makes a sample binary', (t) => {
  t.true(looksBinary(bytes('abc\0def')));
});

test('many invalid UTF-8 bytes make a sample binary; a few do not', (t) => {
  t.true(looksBinary(Uint8Array.from({ length: 1000 }, (_, i) => 0x80 + (i % 64))));
  t.false(looksBinary(Uint8Array.from([...bytes('caf'), 0xe9, ...bytes(' au lait, ol'), 0xe9, 0x0a])));
});

test('a multi-byte sequence cut off by the end of the sample is not invalid', (t) => {
  const euro = bytes('€'); // 3 bytes
  t.is(countInvalidUtf8Bytes(euro.subarray(0, 2)), 0);
  t.is(countInvalidUtf8Bytes(Uint8Array.from([0xe2, 0x41])), 1);
  t.is(countInvalidUtf8Bytes(Uint8Array.from([0xc0, 0xaf])), 2, 'overlong encodings are invalid');
  t.is(countInvalidUtf8Bytes(Uint8Array.from([0xed, 0xa0, 0x80])), 3, 'surrogates are invalid');
});

test('the sniffer decides over the first bytes only and stays binary', (t) => {
  const sniffer = new BinarySniffer(8);
  t.false(sniffer.push(bytes('abcdefgh')));
  t.false(sniffer.push(bytes('\0\0\0')), 'bytes past the window are not sniffed');
  t.false(sniffer.binary);

  const late = new BinarySniffer(16);
  t.false(late.push(bytes('text ')));
  t.true(late.push(bytes('then \0')));
  t.true(late.binary);
  t.false(late.push(bytes('more')), 'reports the change once');
});

test('a bad window size is a RangeError', (t) => {
  t.throws(() => new BinarySniffer(0), { instanceOf: RangeError, message: /limit/ });
});
