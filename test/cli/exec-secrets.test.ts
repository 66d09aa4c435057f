/**
 * `sandbox.secrets` in the user's settings, end to end through `toolcell
 * exec` and a real Docker sandbox: the command has the value; the model's
 * side (the functionResponse parts), the telemetry file and stderr never
 * do, even when the command writes it to a file that read_file and
 * grep_search read back.
 */
import anyTest from 'ava';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { makeWorkspace, requireDocker } from '../helpers/docker.js';

const test = await requireDocker(anyTest, 'cli/exec-secrets');

const FROM_ENV = 'env-secret-Value-81e4f0';
const FROM_FILE = 'file-secret-Value-3c9a27';

async function home(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-secret-home-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'token.txt'), `${FROM_FILE}\n`, { mode: 0o600 });
  await mkdir(join(dir, '.toolcell'));
  return dir;
}

test('from the host environment and from a file: the command has them, nothing the model, telemetry or stderr sees does', async (t) => {
  const dir = await home(t);
  const workspace = await makeWorkspace(t, 'toolcell-secret-ws-');
  await writeFile(
    join(dir, '.toolcell', 'settings.json'),
    JSON.stringify({ sandbox: { secrets: { NPM_TOKEN: { env: 'MY_NPM_TOKEN' }, API_KEY: { file: '~/token.txt' } } } }),
  );
  const telemetry = join(dir, 'telemetry.jsonl');
  const calls = [
    {
      name: 'run_shell_command',
      args: { command: 'echo "npm=$NPM_TOKEN api=$API_KEY"; echo "$NPM_TOKEN $API_KEY" > leak.txt; [ "$API_KEY" = "$(cat /dev/null)" ] || echo has-api-key' },
    },
  ];
  const first = await runCli(['exec', '--workspace', workspace, '--approval', 'yolo', '--json', '--telemetry-file', telemetry], {
    input: JSON.stringify(calls),
    env: { HOME: dir, MY_NPM_TOKEN: FROM_ENV },
  });
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, /npm=\[REDACTED:NPM_TOKEN\] api=\[REDACTED:API_KEY\]/);
  t.regex(first.stdout, /has-api-key/);
  const second = await runCli(['exec', '--workspace', workspace, '--approval', 'yolo', '--json', '--telemetry-file', telemetry], {
    input: JSON.stringify([
      { name: 'read_file', args: { file_path: 'leak.txt' } },
      { name: 'grep_search', args: { pattern: 'Value' } },
      { name: 'run_shell_command', args: { command: 'cat leak.txt | base64; no-such-command "$NPM_TOKEN"' } },
    ]),
    env: { HOME: dir, MY_NPM_TOKEN: FROM_ENV },
  });
  t.is(second.code, 0, second.stderr);
  t.regex(second.stdout, /\[REDACTED:NPM_TOKEN\] \[REDACTED:API_KEY\]/);
  // The file itself holds the values: redaction is on what leaves toolcell, not on what commands write.
  t.is(await readFile(join(workspace, 'leak.txt'), 'utf8'), `${FROM_ENV} ${FROM_FILE}\n`);
  for (const [label, text] of [
    ['first stdout', first.stdout],
    ['first stderr', first.stderr],
    ['second stdout', second.stdout],
    ['second stderr', second.stderr],
    ['telemetry', await readFile(telemetry, 'utf8')],
  ] as const) {
    for (const value of [FROM_ENV, FROM_FILE, Buffer.from(FROM_ENV).toString('base64').slice(0, 16)]) t.false(text.includes(value), `${label}: ${value}`);
  }
});

test("an untrusted workspace's own settings cannot ask for the host's variables", async (t) => {
  const dir = await home(t);
  const workspace = await makeWorkspace(t, 'toolcell-secret-ws-');
  await mkdir(join(workspace, '.toolcell'), { recursive: true });
  await writeFile(join(workspace, '.toolcell', 'settings.json'), JSON.stringify({ sandbox: { secrets: { STOLEN: { env: 'MY_NPM_TOKEN' } } } }));
  const result = await runCli(['exec', '--workspace', workspace, '--approval', 'yolo', '--json'], {
    input: JSON.stringify([{ name: 'run_shell_command', args: { command: 'echo "stolen=[$STOLEN]"' } }]),
    env: { HOME: dir, MY_NPM_TOKEN: FROM_ENV },
  });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /stolen=\[\]/);
  t.regex(result.stderr, /sandbox\.secrets ignored: the workspace is not trusted/);
});

test('a missing source is a warning naming the secret and its source; a short value is refused, never quoted', async (t) => {
  const dir = await home(t);
  const workspace = await makeWorkspace(t, 'toolcell-secret-ws-');
  await writeFile(
    join(dir, '.toolcell', 'settings.json'),
    JSON.stringify({ sandbox: { secrets: { GONE: { env: 'NOT_SET_ANYWHERE' }, TINY: { env: 'TINY_VALUE' }, NOFILE: { file: '/nonexistent/x' } } } }),
  );
  const result = await runCli(['exec', '--workspace', workspace, '--json'], {
    input: JSON.stringify([{ name: 'list_directory', args: { dir_path: '.' } }]),
    env: { HOME: dir, TINY_VALUE: 'q7x' },
  });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /sandbox\.secrets\.GONE: \$NOT_SET_ANYWHERE is not set/);
  t.regex(result.stderr, /sandbox\.secrets\.TINY: the value from \$TINY_VALUE is shorter than 8 characters/);
  t.regex(result.stderr, /sandbox\.secrets\.NOFILE: cannot read \/nonexistent\/x \(ENOENT\)/);
  t.false(result.stderr.includes('q7x'));
});
