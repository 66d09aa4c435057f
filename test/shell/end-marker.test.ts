import test from 'ava';
import { EndMarkerScanner } from '../../src/backends/host/end-marker.js';

const MARKER = '\x1b]7770;end-1234\x07';
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');

test('the marker is found and removed; bytes around it pass', (t) => {
  const scanner = new EndMarkerScanner(MARKER);
  const { data, marker } = scanner.push(Buffer.from(`out${MARKER}late`, 'latin1'));
  t.true(marker);
  t.is(text(data), 'outlate');
});

test('a marker split across chunks is found; a near-miss is passed on', (t) => {
  const scanner = new EndMarkerScanner(MARKER);
  const first = scanner.push(Buffer.from(`abc${MARKER.slice(0, 5)}`, 'latin1'));
  t.is(text(first.data), 'abc', 'the possible marker start is held back');
  t.false(first.marker);
  const second = scanner.push(Buffer.from(`${MARKER.slice(5)}x`, 'latin1'));
  t.true(second.marker);
  t.is(text(second.data), 'x');

  const other = new EndMarkerScanner(MARKER);
  t.is(text(other.push(Buffer.from('\x1b]77', 'latin1')).data), '');
  t.is(text(other.push(Buffer.from('7 not it', 'latin1')).data), '\x1b]777 not it');
  t.is(text(other.push(Buffer.from('tail\x1b', 'latin1')).data), 'tail');
  t.is(text(other.flush()), '\x1b');
});
