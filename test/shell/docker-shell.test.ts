/**
 * The shell service over the real Docker sandbox: the same behaviours as the
 * host tests, end to end (main thread → shell thread → container
 * supervisor → PTY). Skipped without Docker locally; fails under CI=true.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ShellService } from '../../src/shell/shell-service.js';
import type { ShellSessionHandle } from '../../src/shell/session-handle.js';
import type { LiveOutput } from '../../src/tools/tool.js';
import { eventually, makeWorkspace, requireDocker } from '../helpers/docker.js';
import { firstDifferentLine, seqText } from '../helpers/seq-output.js';
import { abortWhenOutput, processesWith, uniqueSleepToken } from './support.js';

const test = await requireDocker(anyTest, 'shell/docker');

// A host secret that must not reach the container; set before the service reads the environment.
process.env.TOOLCELL_DOCKER_TEST_SECRET = 'docker-hunter2';

let service: ShellService | undefined;
test.before(async () => {
  service = await ShellService.create({ liveUpdateIntervalMs: 0, maxOutputBytes: 256 * 1024, outputTailBytes: 4096 });
});
test.after.always(async () => {
  await service?.close();
});

async function dockerSession(t: ExecutionContext): Promise<{ session: ShellSessionHandle; workspace: string }> {
  const workspace = await makeWorkspace(t, 'toolcell-shell-docker-');
  const session = await service!.openSession({ sandbox: 'docker', workspaceRoot: workspace });
  t.teardown(() => session.close());
  return { session, workspace };
}

test("a command runs in the container, in /workspace, as the workspace's owner, rendered like a terminal", async (t) => {
  const { session, workspace } = await dockerSession(t);
  t.is(session.backend, 'docker');
  t.regex(session.describe(), /^docker \(/);
  const result = await session.run({ command: "pwd; id -u; printf 'step 1\\rstep 2\\n'; printf '\\033[32mgreen\\033[0m\\n'; exit 5" });
  const [cwd, uid, ...rest] = result.output.split('\n');
  t.is(cwd, '/workspace');
  t.is(Number(uid), (await stat(workspace)).uid);
  t.deepEqual(rest, ['step 2', 'green']);
  t.is(result.exitCode, 5);
});

test('auto picks the Docker sandbox when the engine answers', async (t) => {
  const workspace = await makeWorkspace(t, 'toolcell-shell-docker-');
  const session = await service!.openSession({ sandbox: 'auto', workspaceRoot: workspace });
  t.teardown(() => session.close());
  t.is(session.backend, 'docker');
  t.is((await session.run({ command: 'pwd' })).output, '/workspace');
});

test('pipes mode in the container: stdin payload in, stdout and stderr apart', async (t) => {
  const { session } = await dockerSession(t);
  const result = await session.run({ command: 'tr a-z A-Z; echo problem >&2; exit 2', mode: 'pipes', stdin: 'quiet words\n' });
  t.is(result.stdout, 'QUIET WORDS\n');
  t.is(result.stderr, 'problem\n');
  t.is(result.exitCode, 2);
});

test('stdin reads end-of-file in the container: prompts do not hang', async (t) => {
  const { session } = await dockerSession(t);
  const result = await session.run({
    command: 'read -p "Name? " name; echo "read rc=$?"; python3 -c "input()" 2>/dev/null; echo "python rc=$?"; cat; echo "cat rc=$?"',
    timeouts: { wallMs: 60_000 },
  });
  t.is(result.timedOut, null);
  t.regex(result.output, /read rc=1/);
  t.regex(result.output, /python rc=1/);
  t.regex(result.output, /cat rc=0/);
});

test('the environment in the container is the allowlist: no host secret', async (t) => {
  const { session } = await dockerSession(t);
  const result = await session.run({ command: 'env' });
  t.notRegex(result.output, /docker-hunter2/);
  t.regex(result.output, /^HOME=\/home\/sandbox$/m);
  t.regex(result.output, /^GIT_TERMINAL_PROMPT=0$/m);
  t.regex(result.output, /^PAGER=cat$/m);
});

test('binary output from the container is detected and described, never shown', async (t) => {
  const { session } = await dockerSession(t);
  const events: LiveOutput[] = [];
  const result = await session.run({ command: 'head -c 50000 /dev/urandom', mode: 'pipes', onOutput: (event) => events.push(event) });
  t.deepEqual(result.binary, { bytes: 50000 });
  t.regex(result.output, /^\[Binary output detected: the command wrote 50000 bytes/);
  t.true(events.some((event) => typeof event === 'object' && event.type === 'binary_detected'));
});

test('a flood from the container is capped: counted in full, start and end kept', async (t) => {
  const { session } = await dockerSession(t);
  const result = await session.run({ command: 'echo FIRST; seq 1 1000000; echo LAST' });
  t.true(result.truncated);
  // Past the output budget the container only counts: the counts stay exact.
  t.is(result.totalBytes, 6 + 6_888_896 + 5);
  t.is(result.totalLines, 1_000_002);
  t.true(result.output.startsWith('FIRST\n1\n2\n'));
  t.true(result.output.endsWith('999999\n1000000\nLAST'));
  t.true(result.output.length < 1_100_000);
});

test('a 600,000-line output from the container is saved whole as it arrives: line N of the file is line N of the output', async (t) => {
  const { session, workspace } = await dockerSession(t);
  const path = join(workspace, '.toolcell', 'tool-outputs', 'seq.txt');
  const result = await session.run({ command: 'seq 1 600000', saveOutput: { path, afterChars: 40_000 } });
  t.is(firstDifferentLine(readFileSync(path, 'utf8'), seqText(600_000)), undefined);
  t.like(result.savedOutput, { path, bytes: 4_088_895, lines: 600_000, savedLines: 600_000, cut: false });
  t.true(result.savedOutput!.excerpt.endsWith('599999\n600000\n'));
});

test('a saved output past what the container sends ends where the sending stopped, saying so; counts and the end stay exact', async (t) => {
  // Coloured lines: the saved plain text is smaller than the raw bytes, so the sending stops before the file's cap.
  const small = await ShellService.create({ maxOutputBytes: 4096, outputTailBytes: 1024, savedOutputMaxBytes: 64 * 1024 });
  t.teardown(() => small.close());
  const workspace = await makeWorkspace(t, 'toolcell-shell-docker-');
  const session = await small.openSession({ sandbox: 'docker', workspaceRoot: workspace });
  t.teardown(() => session.close());
  const path = join(workspace, '.toolcell', 'tool-outputs', 'colours.txt');
  const command = `for i in $(seq 1 20000); do printf '\\033[31m%05d\\033[0m\\n' $i; done`;
  const result = await session.run({ command, saveOutput: { path, afterChars: 1000 } });
  t.is(result.totalBytes, 20_000 * 15);
  t.is(result.totalLines, 20_000);
  t.true(result.output.endsWith('19999\n20000'), result.output.slice(-40));
  const lines = readFileSync(path, 'utf8').split('\n');
  t.is(lines.pop(), '');
  const closing = lines.pop()!;
  t.deepEqual(
    lines,
    Array.from({ length: lines.length }, (_, i) => String(i + 1).padStart(5, '0')),
    'whole lines, in order, up to the cut',
  );
  t.true(lines.length > 1000 && lines.length < 20_000, `${lines.length} lines saved`);
  t.regex(
    closing,
    /^\[\.\.\. saved output cut here, after line \d+, where the sandbox stopped sending the output .*the whole output was 300000 bytes in 20000 lines\) \.\.\.\]$/,
  );
  t.like(result.savedOutput, { path, cut: true, bytes: 300_000, lines: 20_000, savedLines: lines.length });
  t.true(result.savedOutput!.excerpt.endsWith('19999\n20000\n'));
});

const escapes: Array<[string, (token: string) => string]> = [
  ['setsid', (token) => `setsid sleep ${token} & echo ready; sleep ${token}`],
  ['nohup', (token) => `nohup sleep ${token} >/dev/null 2>&1 & echo ready; sleep ${token}`],
  ['a double fork', (token) => `( (sleep ${token} &) & ); echo ready; sleep ${token}`],
  ['setsid plus a double fork', (token) => `setsid sh -c '(sleep ${token} &)'; echo ready; sleep ${token}`],
  ['a tree ignoring SIGTERM', (token) => `trap '' TERM; sleep ${token} & echo ready; sleep ${token}`],
];

for (const [name, command] of escapes) {
  test(`abort in the container kills ${name}`, async (t) => {
    const { session } = await dockerSession(t);
    const token = uniqueSleepToken();
    const { signal, onOutput } = abortWhenOutput(/ready/);
    const result = await session.run({ command: command(token), signal, onOutput });
    t.true(result.aborted);
    t.regex(result.output, /ready/);
    // Container processes are visible in the host's /proc (same kernel).
    t.deepEqual(processesWith(token), []);
    t.notRegex((await session.run({ command: 'ps -eo args' })).output, new RegExp(token.replace('.', '\\.')));
  });
}

test('inactivity and wall-clock limits end commands in the container', async (t) => {
  const { session } = await dockerSession(t);
  // The silence is counted from the start: a loaded machine must not keep bash from printing within the limit.
  const idle = await session.run({ command: 'echo before; sleep 60', timeouts: { inactivityMs: 3000 } });
  t.is(idle.timedOut, 'inactivity');
  t.is(idle.output, 'before');
  // As with the silence above: a wall limit counted from the start must leave a loaded machine time to print.
  const busy = await session.run({ command: 'while true; do echo tick; sleep 0.05; done', timeouts: { wallMs: 3000, inactivityMs: 60_000 } });
  t.is(busy.timedOut, 'wall');
  t.regex(busy.output, /tick/);
});

test('a background job in the container survives the call and ends with the session', async (t) => {
  const { session } = await dockerSession(t);
  const token = uniqueSleepToken();
  const result = await session.run({ command: `echo started; sleep ${token}`, background: true });
  t.is(typeof result.backgroundPid, 'number');
  t.truthy(result.logPath);
  // The call answers once the job is forked; its exec may still be under way.
  t.true(await eventually(async () => processesWith(token).length > 0), 'the job runs after its call returned');
  await session.close();
  t.deepEqual(processesWith(token), []);
});
