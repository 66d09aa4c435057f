import test from 'ava';
import { BoundedText } from '../../src/shell/output/bounded-text.js';
import { ByteTail } from '../../src/shell/output/byte-tail.js';

test('text within the budget is kept whole', (t) => {
  const text = new BoundedText({ headChars: 100, tailChars: 100 });
  text.append('one\n');
  text.append('two');
  t.is(text.toString(), 'one\ntwo');
  t.is(text.omittedChars, 0);
});

test('past the budget, the head and the tail are kept at line boundaries, with a note between', (t) => {
  const text = new BoundedText({ headChars: 20, tailChars: 20 });
  for (let i = 1; i <= 100; i++) text.append(`line ${i}\n`);
  const kept = text.toString();
  t.true(kept.startsWith('line 1\nline 2\n'));
  t.true(kept.endsWith('line 99\nline 100\n'));
  t.regex(kept, /\n\[\.\.\. \d+ characters omitted \.\.\.\]\n/);
  t.true(text.length <= 40);
});

test('lines that were never read are counted in the note, and the tail restarts after them', (t) => {
  const text = new BoundedText({ headChars: 6, tailChars: 100 });
  text.append('head\nearly\n');
  text.omitLines(500);
  text.append('late');
  t.is(text.toString(), 'head\n[... 500 lines and 6 characters omitted ...]\nlate');
});

test('memory stays bounded however much is appended', (t) => {
  const text = new BoundedText({ headChars: 1000, tailChars: 1000 });
  for (let i = 0; i < 100_000; i++) text.append('x'.repeat(50) + '\n');
  t.true(text.length <= 2000);
  t.is(text.omittedChars, 100_000 * 51 - text.length);
});

test('ByteTail keeps the last bytes in order', (t) => {
  const tail = new ByteTail(5);
  tail.push(new TextEncoder().encode('abc'));
  t.is(new TextDecoder().decode(tail.bytes()), 'abc');
  tail.push(new TextEncoder().encode('defg'));
  t.is(new TextDecoder().decode(tail.bytes()), 'cdefg');
  tail.push(new TextEncoder().encode('0123456789'));
  t.is(new TextDecoder().decode(tail.bytes()), '56789');
});

test('bad options are refused naming the field', (t) => {
  t.throws(() => new BoundedText({ headChars: -1, tailChars: 0 }), { instanceOf: RangeError, message: 'BoundedText: options.headChars must be at least 0' });
  t.throws(() => new BoundedText({ headChars: 1, tailChars: 0.5 }), { instanceOf: TypeError, message: 'BoundedText: options.tailChars must be an integer' });
});
