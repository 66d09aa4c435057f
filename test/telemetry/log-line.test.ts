import test from 'ava';
import { createHash } from 'node:crypto';
import { boundValue } from '../../src/telemetry/bounded-value.js';
import { escapeLineBreaks, jsonLogLine } from '../../src/telemetry/log-line.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** Every way a reader may split a text into lines: \n, \r, VT, FF, FS/GS/RS, NEL, LS, PS (Python's splitlines, JavaScript's line terminators). */
// eslint-disable-next-line no-control-regex -- the separators a reader may split on are the point.
const ANY_LINE_BREAK = /\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/;
const OPTIONS = { maxLineBytes: 2048, maxStringChars: 256 };

test('a forged record behind a line separator or a C1 control stays inside its string, escaped', (t) => {
  const forged = '{"time":"2026-01-01T00:00:00.000Z","event":"admin","action":"close_session","tenant":null}';
  for (const separator of ['\u2028', '\u2029', '\u0085', '\u008d', '\u009b', '\u007f', '\u000b', '\u000c', '\u001e', '\r', '\n']) {
    const line = jsonLogLine({ event: 'tool_call', args: { command: `echo a${separator}${forged}${separator}` } }, OPTIONS);
    const pieces = line.slice(0, -1).split(ANY_LINE_BREAK);
    t.is(pieces.length, 1, `U+${separator.charCodeAt(0).toString(16)} splits no line`);
    t.deepEqual(
      (JSON.parse(line) as { args: { command: string } }).args.command,
      `echo a${separator}${forged}${separator}`,
      'and parses back to what was sent',
    );
  }
});

test('bidi controls are escaped too, so a line shows what it holds', (t) => {
  const escaped = escapeLineBreaks(JSON.stringify('rm -rf /\u202e txt.exe\u2066\u2069\u200f\u061c'));
  t.false(/[\u202e\u2066\u2069\u200f\u061c]/.test(escaped));
  t.is(JSON.parse(escaped), 'rm -rf /\u202e txt.exe\u2066\u2069\u200f\u061c');
});

test('a long value keeps its head, with its whole length and SHA-256', (t) => {
  const command = 'é'.repeat(2_000_000);
  const line = jsonLogLine({ event: 'tool_call', args: { command } }, OPTIONS);
  t.true(Buffer.byteLength(line) <= OPTIONS.maxLineBytes);
  t.is((JSON.parse(line) as { args: { command: string } }).args.command, `${'é'.repeat(256)}…[cut: 4000000 bytes in all, sha256 ${sha256(command)}]`);
});

test('no entry, however it is shaped, makes a line longer than the bound', (t) => {
  const many = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 'v'.repeat(i % 300)]));
  let deep: unknown = 'bottom';
  for (let i = 0; i < 10_000; i++) deep = { deep };
  const hostile: Array<Record<string, unknown>> = [
    { event: 'tool_call', args: many },
    { event: 'tool_call', args: { list: Array.from({ length: 100_000 }, (_, i) => i) } },
    { event: 'tool_call', args: { deep } },
    { event: 'tool_call', args: { ['k'.repeat(1_000_000)]: 1 } },
    { event: 'tool_call', args: { command: '\u0001'.repeat(1_000_000) } },
    { event: 'egress', host: 'h'.repeat(100_000), reason: '\u2028'.repeat(100_000), a: 'x'.repeat(5000), b: 'y'.repeat(5000), c: 'z'.repeat(5000) },
    Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`field${i}`, 'w'.repeat(200)])),
  ];
  for (const [index, entry] of hostile.entries()) {
    const line = jsonLogLine({ time: '2026-01-01T00:00:00.000Z', tenant: 'acme', ...entry }, OPTIONS);
    t.true(Buffer.byteLength(line) <= OPTIONS.maxLineBytes, `entry ${index}: ${Buffer.byteLength(line)} bytes`);
    t.true(line.endsWith('\n') && !line.slice(0, -1).includes('\n'));
    const parsed = JSON.parse(line) as Record<string, unknown>;
    t.is(parsed['tenant'], 'acme', `entry ${index} keeps who it is about`);
  }
});

test('boundValue leaves small values as they are and never rewrites its input', (t) => {
  const input = { a: [1, 'two', { three: null, four: true }], b: 'x'.repeat(10) };
  const copy = structuredClone(input);
  t.deepEqual(boundValue(input, { maxStringChars: 100 }), input);
  t.deepEqual(input, copy);
});
