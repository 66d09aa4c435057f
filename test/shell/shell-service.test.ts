import test from 'ava';
import { existsSync } from 'node:fs';
import type { LiveOutput } from '../../src/tools/tool.js';
import { useShellService, useShellSession } from './support.js';

test('a PTY command is rendered as a terminal shows it: \\r progress, ANSI colours, wrapped lines', async (t) => {
  const { session } = await useShellSession(t);
  const long = 'x'.repeat(300);
  const result = await session.run({
    command: `printf 'progress 10%%\\rprogress 55%%\\rprogress 100%%\\n'; printf '\\033[1;31mred\\033[0m plain\\n'; echo ${long}; echo to-stderr >&2; echo end`,
  });
  t.is(result.exitCode, 0);
  t.is(result.output, `progress 100%\nred plain\n${long}\nto-stderr\nend`);
  t.false(result.truncated);
  t.is(result.binary, null);
});

test('the command runs in the workspace, or in a directory inside it', async (t) => {
  const { session, workspace } = await useShellSession(t);
  workspace.mkdir('sub/dir');
  t.is((await session.run({ command: 'pwd' })).output, workspace.root);
  t.is((await session.run({ command: 'pwd', cwd: 'sub/dir' })).output, workspace.path('sub/dir'));
});

test('a working directory outside the workspace is refused before anything runs', async (t) => {
  const { session, workspace } = await useShellSession(t);
  const error = await t.throwsAsync(session.run({ command: 'touch escaped', cwd: '..' }));
  t.is((error as { code?: string }).code, 'path_not_in_workspace');
  t.false(existsSync(`${workspace.outside}/../escaped`));
});

test('exit codes are reported; a command killed by a signal exits 128+n, as in bash', async (t) => {
  const { session } = await useShellSession(t);
  t.is((await session.run({ command: 'exit 7' })).exitCode, 7);
  const killed = await session.run({ command: 'echo partial; kill -KILL $$' });
  t.is(killed.exitCode, 137);
  t.is(killed.output, 'partial');
});

test('a cancelled command reports the signal that ended it', async (t) => {
  const { session } = await useShellSession(t, { service: { liveUpdateIntervalMs: 0 } });
  const controller = new AbortController();
  const result = await session.run({
    command: 'echo started; sleep 60',
    signal: controller.signal,
    onOutput: (output) => String(output).includes('started') && controller.abort(),
  });
  t.true(result.aborted);
  t.is(result.exitCode, null);
  t.is(result.signal, 'SIGTERM');
});

test('the end of a fast command is never lost (the terminal is drained before it closes)', async (t) => {
  const { session } = await useShellSession(t);
  for (let i = 0; i < 5; i++) {
    const result = await session.run({ command: 'head -c 300000 /dev/urandom' });
    t.is(result.totalBytes, 300000);
    const text = await session.run({ command: 'seq 1 50000' });
    t.true(text.output.endsWith('\n49999\n50000'));
  }
});

test('stdin reads end-of-file at once: read, input() and /dev/tty prompts do not hang', async (t) => {
  const { session } = await useShellSession(t, { service: {} });
  const result = await session.run({
    command: [
      'read -p "Name? " name; echo "read rc=$?"',
      'read x < /dev/tty; echo "tty rc=$?"',
      'cat; echo "cat rc=$?"',
      'python3 -c "input()" 2>/dev/null; echo "python rc=$?"',
    ].join('; '),
    timeouts: { wallMs: 60_000 },
  });
  t.is(result.timedOut, null);
  t.regex(result.output, /read rc=1/);
  t.regex(result.output, /tty rc=1/);
  t.regex(result.output, /cat rc=0/);
  t.regex(result.output, /python rc=1/);
});

test('the environment is an allowlist: host secrets do not pass, named variables do', async (t) => {
  process.env.TOOLCELL_TEST_SECRET = 'hunter2-secret';
  process.env.TOOLCELL_TEST_PASSED = 'passed-value';
  t.teardown(() => {
    delete process.env.TOOLCELL_TEST_SECRET;
    delete process.env.TOOLCELL_TEST_PASSED;
  });
  const { session } = await useShellSession(t, { service: { passEnv: ['TOOLCELL_TEST_PASSED'] } });
  const result = await session.run({ command: 'env', env: { EXTRA: 'extra-value' } });
  t.notRegex(result.output, /hunter2-secret/);
  t.regex(result.output, /^TOOLCELL_TEST_PASSED=passed-value$/m);
  t.regex(result.output, /^EXTRA=extra-value$/m);
  for (const line of ['PAGER=cat', 'GIT_PAGER=cat', 'GIT_TERMINAL_PROMPT=0', 'TERM=xterm-256color', 'COLUMNS=120']) {
    t.regex(result.output, new RegExp(`^${line}$`, 'm'));
  }
});

test('pipes mode: stdin payload in, stdout and stderr apart', async (t) => {
  const { session } = await useShellSession(t);
  const result = await session.run({ command: 'cat; echo oops >&2; exit 4', mode: 'pipes', stdin: 'line one\nline two\n' });
  t.is(result.stdout, 'line one\nline two\n');
  t.is(result.stderr, 'oops\n');
  t.is(result.exitCode, 4);
});

test('pipes mode: a large stdin payload and no ANSI rendering', async (t) => {
  const { session } = await useShellSession(t);
  const payload = new Uint8Array(2 * 1024 * 1024).fill(0x61);
  const counted = await session.run({ command: 'wc -c', mode: 'pipes', stdin: payload });
  t.is(counted.stdout?.trim(), String(payload.length));
  const raw = await session.run({ command: "printf 'a\\rb\\033[31mc\\n'", mode: 'pipes' });
  t.is(raw.stdout, 'a\rb\x1b[31mc\n');
});

test('stdin in pty mode is refused with a TypeError', async (t) => {
  const { session } = await useShellSession(t);
  await t.throwsAsync(session.run({ command: 'cat', stdin: 'x' }), { instanceOf: TypeError, message: /pipes/ });
});

test('binary output: detected, reported as events, described in one line, never shown', async (t) => {
  const { session } = await useShellSession(t, { service: { liveUpdateIntervalMs: 0 } });
  const events: LiveOutput[] = [];
  const result = await session.run({ command: 'head -c 200000 /dev/urandom', onOutput: (output) => events.push(output) });
  t.deepEqual(result.binary, { bytes: 200000 });
  t.is(result.totalBytes, 200000);
  t.regex(result.output, /^\[Binary output detected: the command wrote 200000 bytes \(195\.3 KB\) of binary data; it is not shown\.\]$/);
  const kinds = events.map((event) => (typeof event === 'string' ? 'text' : event.type));
  t.is(kinds.filter((kind) => kind === 'binary_detected').length, 1);
  t.true(kinds.includes('binary_progress'));
  t.false(kinds.includes('text'));
  const last = events.at(-1);
  t.true(typeof last === 'object' && last.bytesReceived <= 200000);
});

test('a NUL byte after some text still makes the output binary', async (t) => {
  const { session } = await useShellSession(t);
  const result = await session.run({ command: "echo hello; printf 'abc\\000def'" });
  t.truthy(result.binary);
  t.notRegex(result.output, /hello/);
});

test('invalid UTF-8 in small doses stays text', async (t) => {
  const { session } = await useShellSession(t);
  const result = await session.run({ command: "printf 'caf\\351 ol\\351\\n'" });
  t.is(result.binary, null);
  t.is(result.output, 'caf\uFFFD ol\uFFFD');
});

test('output past the byte cap is counted, its start and end kept, the rest noted', async (t) => {
  const { session } = await useShellSession(t, { service: { maxOutputBytes: 64 * 1024, outputTailBytes: 4096 } });
  const result = await session.run({ command: 'echo FIRST; seq 1 3000000; echo LAST' });
  t.true(result.truncated);
  t.is(result.totalBytes, 'FIRST\n'.length + 22_888_896 + 'LAST\n'.length);
  t.true(result.output.startsWith('FIRST\n1\n2\n'));
  t.true(result.output.endsWith('2999999\n3000000\nLAST'));
  t.regex(result.output, /output truncated: the command wrote 22888907 bytes/);
  t.true(result.output.length < 100_000, `kept ${result.output.length} characters`);
});

test('live updates are throttled: a long interval gives exactly one update for a flood', async (t) => {
  const { session } = await useShellSession(t, { service: { liveUpdateIntervalMs: 3_600_000 } });
  const updates: LiveOutput[] = [];
  const result = await session.run({ command: 'seq 1 200000', onOutput: (output) => updates.push(output) });
  t.is(result.exitCode, 0);
  t.is(updates.length, 1);
  t.is(typeof updates[0], 'string');
});

test('live updates replace each other and show the latest lines while the command runs', async (t) => {
  const { session, workspace } = await useShellSession(t, { service: { liveUpdateIntervalMs: 0, liveLines: 2 } });
  // The command waits for the test to have seen each step (at most 20 s), so no timing is assumed.
  const waitFor = (file: string): string => `for n in $(seq 1000); do [ -e ${file} ] && break; sleep 0.02; done`;
  const updates: string[] = [];
  const result = await session.run({
    command: `echo step 1; ${waitFor('seen1')}; echo step 2; ${waitFor('seen2')}; echo step 3`,
    onOutput: (output) => {
      const text = String(output);
      updates.push(text);
      if (text.includes('step 1')) workspace.write('seen1', '');
      if (text.includes('step 2')) workspace.write('seen2', '');
    },
  });
  t.is(result.output, 'step 1\nstep 2\nstep 3', JSON.stringify(updates));
  t.is(updates[0], 'step 1');
  t.true(updates.includes('step 1\nstep 2'), 'a later update replaces the earlier one with the whole current state');
  t.true(
    updates.every((update) => update.split('\n').length <= 2),
    'each update holds the last lines only',
  );
});

test('inactivity timeout ends a silent command and keeps its output', async (t) => {
  const { session } = await useShellSession(t);
  // The silence is counted from the start: a loaded machine must not keep bash from printing within the limit.
  const result = await session.run({ command: 'echo before; sleep 60', timeouts: { inactivityMs: 3000 } });
  t.is(result.timedOut, 'inactivity');
  t.false(result.aborted);
  t.is(result.output, 'before');
});

test('wall-clock timeout ends a chatty command', async (t) => {
  const { session } = await useShellSession(t);
  const result = await session.run({ command: 'while true; do echo tick; sleep 0.05; done', timeouts: { wallMs: 3000, inactivityMs: 60_000 } });
  t.is(result.timedOut, 'wall');
  t.regex(result.output, /tick/);
});

test('an aborted signal before the run starts rejects with cancelled and runs nothing', async (t) => {
  const { session, workspace } = await useShellSession(t);
  const controller = new AbortController();
  controller.abort();
  await t.throwsAsync(session.run({ command: 'touch ran', signal: controller.signal }), { message: /cancelled/ });
  t.false(workspace.exists('ran'));
});

test('malformed options are TypeErrors naming the option', async (t) => {
  const { service, session, workspace } = await useShellSession(t);
  await t.throwsAsync(session.run({ command: '  ' }), { instanceOf: TypeError, message: /command/ });
  await t.throwsAsync(session.run({ command: 'true', mode: 'tty' as 'pty' }), { instanceOf: TypeError, message: /mode/ });
  await t.throwsAsync(session.run({ command: 'true', env: { 'BAD NAME': 'x' } }), { instanceOf: TypeError, message: /env/ });
  await t.throwsAsync(session.run({ command: 'true', timeouts: { wallMs: -1 } }), { instanceOf: RangeError, message: /wallMs/ });
  await t.throwsAsync(service.openSession({ sandbox: 'maybe' as 'auto', workspaceRoot: workspace.root }), { instanceOf: TypeError, message: /sandbox/ });
  await t.throwsAsync(service.openSession({ workspaceRoot: 'relative/path' }), { instanceOf: TypeError, message: /workspaceRoot/ });
});

test('ShellService.create validates its options', async (t) => {
  await t.throwsAsync(useShellService(t, { maxOutputBytes: 0 }), { instanceOf: RangeError, message: /maxOutputBytes/ });
  await t.throwsAsync(useShellService(t, { passEnv: ['1BAD'] }), { instanceOf: TypeError, message: /passEnv/ });
});

test('runs of one session run in parallel', async (t) => {
  const { session, workspace } = await useShellSession(t);
  // Each waits (at most 20 s) for the other's mark: run one after the other, the first would time out.
  const wait = (mine: string, other: string): string =>
    `touch ${mine}; for n in $(seq 400); do [ -e ${other} ] && { echo met; exit 0; }; sleep 0.05; done; exit 1`;
  const [a, b] = await Promise.all([session.run({ command: wait('a', 'b') }), session.run({ command: wait('b', 'a') })]);
  t.is(a.output, 'met');
  t.is(b.output, 'met');
  t.true(workspace.exists('a'));
});
