/**
 * Attacks through the public CLI, as users and reviewers run it:
 * `toolcell exec - --workspace DIR --sandbox docker --json` with a batch on
 * stdin. Covers what only the CLI process has: its environment, SIGINT,
 * being killed outright, and the text it prints for people.
 */
import anyTest from 'ava';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { assertNoRawControls, dockerText, makeTempDir, nonce, responseText, runCli } from '../helpers/security.js';
import { UNDER_GVISOR } from '../helpers/test-runtime.js';

const docker = await requireDocker(anyTest, 'security/cli');
const test = docker.serial;

/** Container ids (full) that exist right now, running or not. */
async function allContainers(): Promise<string[]> {
  return (await dockerText(['ps', '-a', '-q', '--no-trunc'])).split('\n').filter(Boolean);
}

/** The container id a command reported through `cat /etc/hostname` (the 12-character prefix). */
function hostnameIn(text: string): string | undefined {
  return /\b([0-9a-f]{12})\b/.exec(text)?.[1];
}

async function waitUntilGone(prefix: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await allContainers()).some((id) => id.startsWith(prefix))) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

test("a batch of attacks through the CLI: the CLI's secret env is invisible, nothing escapes, benign calls answer", async (t) => {
  const workspace = await makeTempDir(t);
  const secret = nonce('cli-secret');
  const run = await runCli(
    [
      { id: 'env', name: 'run_shell_command', args: { command: 'env; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"' } },
      { id: 'net', name: 'run_shell_command', args: { command: 'echo > /dev/tcp/169.254.169.254/80; echo "net=$?"' } },
      {
        id: 'caps',
        name: 'run_shell_command',
        // gVisor's status has no NoNewPrivs line: prctl(PR_GET_NO_NEW_PRIVS) answers there.
        args: {
          command: `grep -E '^(NoNewPrivs|CapEff)' /proc/self/status; python3 -c 'import ctypes; print("prctl-nnp", ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'`,
        },
      },
      { id: 'root', name: 'run_shell_command', args: { command: 'touch /pwned; echo "root=$?"' } },
      { id: 'read', name: 'read_file', args: { file_path: '/etc/shadow' } },
      { id: 'ok', name: 'run_shell_command', args: { command: 'echo benign-ok' } },
    ],
    { workspace, env: { TOOLCELL_CLI_CANARY: secret, OPENAI_API_KEY: secret } },
  );
  t.is(run.exitCode, 0, run.stderr);
  t.false(run.stdout.includes(secret), 'the secret env var of the CLI reached the model');
  t.regex(responseText(run.responses.get('net')), /net=1/);
  t.regex(responseText(run.responses.get('caps')), UNDER_GVISOR ? /prctl-nnp 1/ : /NoNewPrivs:\s+1/);
  t.regex(responseText(run.responses.get('caps')), /CapEff:\s+0{16}/);
  t.regex(responseText(run.responses.get('root')), /root=1/);
  t.truthy(run.responses.get('read')?.['error'], 'read_file outside the workspace is an error');
  t.regex(responseText(run.responses.get('ok')), /benign-ok/);
});

test('SIGINT cancels running calls (setsid and nohup children included), exits 130, and leaves no container', async (t) => {
  const workspace = await makeTempDir(t);
  const run = await runCli(
    [
      {
        id: 'long',
        name: 'run_shell_command',
        args: { command: 'cat /etc/hostname; setsid sleep 3001 & nohup sleep 3002 >/dev/null 2>&1 & touch started; sleep 1000' },
      },
    ],
    { workspace, interruptWhenExists: join(workspace, 'started'), timeoutSeconds: 60 },
  );
  t.is(run.exitCode, 130, run.stderr);
  const response = run.responses.get('long');
  t.regex(String(response?.['error'] ?? ''), /cancel/i);
  const id = hostnameIn(responseText(response));
  t.truthy(id, `the partial output is kept: ${responseText(response)}`);
  t.false(
    (await allContainers()).some((full) => full.startsWith(id ?? '-')),
    'the container is removed when the CLI exits',
  );
});

test('a CLI killed outright (SIGKILL) leaves no sandbox running: the supervisor ends with its stdin', async (t) => {
  const workspace = await makeTempDir(t);
  const run = await runCli(
    [{ id: 'long', name: 'run_shell_command', args: { command: 'cat /etc/hostname > started.tmp; mv started.tmp started; setsid sleep 3003 & sleep 1000' } }],
    { workspace, interruptWhenExists: join(workspace, 'started'), killSignal: 'SIGKILL', timeoutSeconds: 60 },
  );
  t.is(run.signal, 'SIGKILL');
  const { readFile } = await import('node:fs/promises');
  const id = hostnameIn(await readFile(join(workspace, 'started'), 'utf8'));
  t.truthy(id);
  t.true(await waitUntilGone(id ?? '-', 20_000), 'the orphaned container must stop and be removed by itself');
});

test('the text the CLI prints for people carries no raw terminal escapes from a command', async (t) => {
  const workspace = await makeTempDir(t);
  const run = await runCli(
    [
      { id: 'esc', name: 'run_shell_command', args: { command: "printf '\\033]52;c;cHduZWQ=\\a\\033]0;title\\007\\033[2J\\233Hvisible-text\\n'" } },
      { id: 'ok', name: 'run_shell_command', args: { command: 'echo benign-after' } },
    ],
    { workspace, text: true },
  );
  t.is(run.exitCode, 0, run.stderr);
  t.true(run.stdout.includes('visible-text'), run.stdout);
  t.true(run.stdout.includes('benign-after'), 'the other call of the batch works');
  assertNoRawControls(t, run.stdout, 'CLI text output');
});

test('auto without a reachable engine fails closed: the shell call errors and nothing runs on the host', async (t) => {
  const workspace = await makeTempDir(t);
  const hostDir = await makeTempDir(t, 'toolcell-sec-marker-');
  const marker = join(hostDir, 'ran-on-host');
  const run = await runCli([{ id: 'cmd', name: 'run_shell_command', args: { command: `touch ${marker}; echo ran` } }], {
    workspace,
    sandbox: 'auto',
    env: { DOCKER_HOST: `unix://${join(hostDir, 'no-engine.sock')}` },
  });
  const { existsSync } = await import('node:fs');
  t.false(existsSync(marker), 'the command ran on the host');
  t.regex(String(run.responses.get('cmd')?.['error'] ?? ''), /sandbox|docker/i, run.stdout + run.stderr);
});

test('discovered tools configured by the user run in the sandbox, not on the host', async (t) => {
  const workspace = await makeTempDir(t);
  const hostDir = await makeTempDir(t, 'toolcell-sec-marker-');
  const marker = join(hostDir, 'discovered-ran-on-host');
  const declarations = JSON.stringify([{ name: 'probe', description: 'Reports where it runs.', parameters: { type: 'object', properties: {} } }]);
  const settingsFile = join(hostDir, 'settings.json');
  const { writeFile } = await import('node:fs/promises');
  await writeFile(
    settingsFile,
    JSON.stringify({
      tools: {
        discoveryCommand: `echo '${declarations}'`,
        callCommand: `touch ${marker} 2>/dev/null; echo "uid=$(id -u) host=$(cat /etc/hostname)"; true`,
        discoveryTrusted: true,
      },
    }),
  );
  const run = await runCli([{ id: 'probe', name: 'discovered_tool_probe', args: {} }], { workspace, env: {}, timeoutSeconds: 30, settings: settingsFile });
  const { existsSync } = await import('node:fs');
  t.false(existsSync(marker), 'the discovered tool ran on the host');
  // In a container (its hostname is the container id), as the workspace's owner.
  const { stat } = await import('node:fs/promises');
  t.regex(responseText(run.responses.get('probe')), new RegExp(`uid=${(await stat(workspace)).uid} host=[0-9a-f]{12}\\n`), run.stdout + run.stderr);
});

test('containers left by a dead toolcell process are removed when toolcell next starts', async (t) => {
  const { hostname } = await import('node:os');
  const image = (await dockerText(['images', '--format', '{{.Repository}}:{{.Tag}}', 'toolcell-sandbox'])).split('\n')[0]!;
  const leftover = (
    await dockerText([
      'run',
      '-d',
      '--network',
      'none',
      '--label',
      'dev.toolcell.sandbox=1',
      '--label',
      'dev.toolcell.owner-pid=2147483646',
      '--label',
      'dev.toolcell.owner-start=1',
      '--label',
      `dev.toolcell.owner-host=${hostname()}`,
      image,
      'sleep',
      '600',
    ])
  ).trim();
  t.teardown(() => dockerText(['rm', '-f', leftover]).catch(() => ''));
  const workspace = await makeTempDir(t);
  const run = await runCli([{ id: 'ok', name: 'run_shell_command', args: { command: 'echo started' } }], { workspace });
  t.regex(responseText(run.responses.get('ok')), /started/);
  t.false((await allContainers()).includes(leftover), 'the leftover container is still there');
});

test("escape sequences in the model's own arguments and call ids never reach people's terminal raw", async (t) => {
  const workspace = await makeTempDir(t);
  const run = await runCli(
    [
      {
        id: 'id\u001b]0;pwned\u0007',
        name: 'run_shell_command',
        args: { command: 'echo "arg\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u009b31mtext"', description: 'desc\u001b[8mhidden' },
      },
      { id: 'w', name: 'write_file', args: { file_path: 'esc.txt', content: 'line\u001b]0;title\u0007\n' } },
      { id: 'ok', name: 'run_shell_command', args: { command: 'echo benign-after' } },
    ],
    { workspace, text: true },
  );
  t.is(run.exitCode, 0, run.stderr);
  t.true(run.stdout.includes('benign-after'), 'the other call of the batch works');
  assertNoRawControls(t, run.stdout, 'CLI text output');
  assertNoRawControls(t, run.stderr, 'CLI stderr');
});
