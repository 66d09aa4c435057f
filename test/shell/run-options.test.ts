import test from 'ava';
import { parseOptions } from '../../src/contracts/parse-options.js';
import { shellRunOptionsSchema } from '../../src/shell/run-options.js';

const parse = (options: unknown) => parseOptions(shellRunOptionsSchema, options, 'run');

test('defaults are filled in', (t) => {
  const options = parse({ command: 'true' });
  t.like(options, { cwd: '', env: {}, mode: 'pty', background: false, timeouts: { inactivityMs: 300_000 } });
  t.is(options.timeouts.wallMs, undefined);
});

const bad: Array<[string, unknown, string, typeof TypeError | typeof RangeError]> = [
  ['no command', {}, 'run: options.command must be a string', TypeError],
  ['a blank command', { command: ' \t' }, 'run: options.command must be a non-empty string', TypeError],
  ['a NUL in the command', { command: 'a\0b' }, 'run: options.command must not contain NUL characters', TypeError],
  ['a NUL in cwd', { command: 'x', cwd: 'a\0' }, 'run: options.cwd must not contain NUL characters', TypeError],
  ['a bad env name', { command: 'x', env: { '1A': 'x' } }, 'run: options.env.1A must be a valid environment variable name', TypeError],
  ['an env value that is a number', { command: 'x', env: { A: 1 } }, 'run: options.env.A must be a string', TypeError],
  ['an unknown mode', { command: 'x', mode: 'tty' }, "run: options.mode must be 'pty' or 'pipes'", TypeError],
  [
    'stdin with a PTY',
    { command: 'x', stdin: 'hi' },
    "run: options.stdin must not be given without mode 'pipes' (a PTY's stdin always reads end-of-file)",
    TypeError,
  ],
  ['stdin as a number', { command: 'x', mode: 'pipes', stdin: 5 }, 'run: options.stdin must be a string or a Uint8Array', TypeError],
  ['a negative inactivity limit', { command: 'x', timeouts: { inactivityMs: -1 } }, 'run: options.timeouts.inactivityMs must be at least 0', RangeError],
  ['a zero wall limit', { command: 'x', timeouts: { wallMs: 0 } }, 'run: options.timeouts.wallMs must be more than 0', RangeError],
  ['onOutput that is not a function', { command: 'x', onOutput: 5 }, 'run: options.onOutput must be a function', TypeError],
  [
    'a relative saveOutput path',
    { command: 'x', saveOutput: { path: 'rel', afterChars: 1 } },
    'run: options.saveOutput.path must be an absolute path',
    TypeError,
  ],
  ['saveOutput.afterChars 0', { command: 'x', saveOutput: { path: '/a', afterChars: 0 } }, 'run: options.saveOutput.afterChars must be at least 1', RangeError],
  ['a signal that is not an AbortSignal', { command: 'x', signal: 5 }, 'run: options.signal must be an AbortSignal', TypeError],
];

for (const [label, options, message, type] of bad) {
  test(`${label} is refused, naming the option`, (t) => {
    t.throws(() => parse(options), { instanceOf: type, message });
  });
}
