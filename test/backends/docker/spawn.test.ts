/**
 * Starting commands: exit statuses, pty and pipes modes, stdin, the exact
 * environment, the working directory, and output delivered before `exited`.
 */
import anyTest from 'ava';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolErrorType } from '../../../src/errors.js';
import { SANDBOX_TEST_ENV, makeWorkspace, requireDocker, runCommand, useSandboxBackend } from '../../helpers/docker.js';
import { UNDER_GVISOR } from '../../helpers/test-runtime.js';

const test = await requireDocker(anyTest, 'sandbox/spawn');
const sandbox = useSandboxBackend(test);

test('exit codes and signals come back as ExitStatus', async (t) => {
  const session = await sandbox.session(t);
  t.deepEqual((await runCommand(session, 'true')).status, { exitCode: 0, signal: null });
  t.deepEqual((await runCommand(session, 'exit 42')).status, { exitCode: 42, signal: null });
  t.deepEqual((await runCommand(session, 'kill -USR1 $$')).status, { exitCode: null, signal: 'SIGUSR1' });
});

test('pty mode: one terminal stream, stdin at EOF, no controlling terminal, LF passed through', async (t) => {
  const session = await sandbox.session(t);
  if (UNDER_GVISOR) {
    // gVisor's terminal queues output without bound: one pipe carries both streams there (stdio.py), and no terminal is seen.
    const merged = await runCommand(session, '[ -t 1 ] || echo stdout-is-a-pipe; echo to-stderr >&2; read line; echo "read=$?"; printf "a\\nb\\n"');
    t.is(merged.stderr, '', 'pty mode merges everything into stdout');
    t.is(merged.stdout, 'stdout-is-a-pipe\nto-stderr\nread=1\na\nb\n');
    return;
  }
  const result = await runCommand(
    session,
    '[ -t 1 ] && echo stdout-is-tty; echo to-stderr >&2; read line; echo "read=$?"; tty; exec 3</dev/tty 2>/dev/null || echo no-dev-tty',
    { cols: 123, rows: 45 },
  );
  t.is(result.stderr, '', 'pty mode merges everything into stdout');
  t.regex(result.stdout, /stdout-is-tty\n/);
  t.regex(result.stdout, /to-stderr\n/);
  t.regex(result.stdout, /read=1\n/);
  t.regex(result.stdout, /not a tty\n/);
  t.false(result.stdout.includes('\r'), 'no output post-processing: the kernel does not turn LF into CRLF');
  const modes = await runCommand(session, 'stty -a < /proc/self/fd/1');
  t.regex(modes.stdout, /-opost/);
  t.regex(modes.stdout, /-echo /);
  t.regex(result.stdout, /no-dev-tty/);
  const size = await runCommand(session, 'stty size < /proc/self/fd/1', { cols: 123, rows: 45 });
  t.is(size.stdout.trim(), '45 123');
});

test('pipes mode: separate streams and a stdin payload followed by EOF', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, '[ -t 1 ] || echo not-a-tty; cat; echo err >&2', { mode: 'pipes', stdin: Buffer.from('payload\nline 2\n') });
  t.is(result.stdout, 'not-a-tty\npayload\nline 2\n');
  t.is(result.stderr, 'err\n');
  const none = await runCommand(session, 'cat; echo "rc=$?"', { mode: 'pipes' });
  t.is(none.stdout, 'rc=0\n', 'without a payload stdin is empty');
});

test('a large stdin payload arrives byte for byte', async (t) => {
  const session = await sandbox.session(t);
  const payload = Buffer.alloc(3 * 1024 * 1024 + 17);
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 7919) % 251;
  const result = await runCommand(session, 'sha256sum | cut -d" " -f1', { mode: 'pipes', stdin: payload });
  const { createHash } = await import('node:crypto');
  t.is(result.stdout.trim(), createHash('sha256').update(payload).digest('hex'));
});

test('all output is delivered before exited settles', async (t) => {
  const session = await sandbox.session(t);
  for (const mode of ['pipes', 'pty'] as const) {
    const result = await runCommand(session, 'head -c 5000000 /dev/zero', { mode });
    t.is(result.bytes, 5_000_000, mode);
  }
});

test('output that arrives before a listener is attached is not lost', async (t) => {
  const session = await sandbox.session(t);
  const spawned = await session.spawn({ command: 'echo early', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pipes' });
  await spawned.exited;
  let text = '';
  spawned.onData((chunk) => {
    text += Buffer.from(chunk).toString();
  });
  t.is(text, 'early\n');
});

test('the environment is exactly the one given: nothing of the host leaks in', async (t) => {
  process.env['TOOLCELL_TEST_SECRET'] = 'host-secret-value';
  t.teardown(() => {
    delete process.env['TOOLCELL_TEST_SECRET'];
  });
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'env | sort', { mode: 'pipes', env: { PATH: '/usr/bin:/bin', ONLY_THIS: 'yes' } });
  const names = result.stdout
    .trim()
    .split('\n')
    .map((line) => line.split('=')[0])
    .filter((name) => !['PWD', 'SHLVL', '_'].includes(name ?? ''));
  t.deepEqual(names, ['ONLY_THIS', 'PATH']);
  t.notRegex(result.stdout, /host-secret-value/);
});

test('cwd is relative to the workspace root', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  await mkdir(join(workspaceRoot, 'sub', 'dir'), { recursive: true });
  const session = await sandbox.session(t, { workspaceRoot });
  t.is((await runCommand(session, 'pwd', { mode: 'pipes', cwd: 'sub/dir' })).stdout, '/workspace/sub/dir\n');
  t.is((await runCommand(session, 'pwd', { mode: 'pipes', cwd: '' })).stdout, '/workspace\n');
});

test('a cwd that does not exist fails the spawn with shell_execute_error', async (t) => {
  const session = await sandbox.session(t);
  const error = await t.throwsAsync(session.spawn({ command: 'true', cwd: 'missing', env: {}, mode: 'pty' }));
  t.is((error as { code?: string }).code, ToolErrorType.SHELL_EXECUTE_ERROR);
  t.regex(error?.message ?? '', /chdir \/workspace\/missing/);
  t.deepEqual((await runCommand(session, 'true')).status, { exitCode: 0, signal: null }, 'the session still works');
});

test('bad spawn options are rejected before anything runs, naming the field', async (t) => {
  const session = await sandbox.session(t);
  await t.throwsAsync(session.spawn({ command: 'true', cwd: '../..', env: {}, mode: 'pty' }), { instanceOf: TypeError, message: /options\.cwd/ });
  await t.throwsAsync(session.spawn({ command: 'true', cwd: '/etc', env: {}, mode: 'pty' }), { instanceOf: TypeError, message: /options\.cwd/ });
  await t.throwsAsync(session.spawn({ command: 'true', cwd: '.', env: { 'A=B': 'x' }, mode: 'pty' }), { instanceOf: TypeError, message: /options\.env/ });
  await t.throwsAsync(session.spawn({ command: 'true', cwd: '.', env: {}, mode: 'tty' as 'pty' }), { instanceOf: TypeError, message: /options\.mode/ });
  await t.throwsAsync(session.spawn({ command: 'true', cwd: '.', env: {}, mode: 'pty', cols: 0 }), { instanceOf: RangeError, message: /options\.cols/ });
});

test('several commands can run at once in one session', async (t) => {
  const session = await sandbox.session(t);
  const results = await Promise.all([1, 2, 3, 4, 5].map((n) => runCommand(session, `sleep 0.2; echo ${n}`, { mode: 'pipes' })));
  t.deepEqual(
    results.map((r) => r.stdout),
    ['1\n', '2\n', '3\n', '4\n', '5\n'],
  );
});
