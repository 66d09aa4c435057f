/**
 * `--runtime NAME` as a user types it: a runtime the engine lacks stops the
 * command before anything runs, in one line saying how to set it up; the
 * chosen runtime runs the commands, and the telemetry of each call names it.
 */
import anyTest from 'ava';
import { chown, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';
import { requireGvisor } from '../helpers/test-runtime.js';

const docker = await requireDocker(anyTest, 'cli/exec-runtime');
const test = await requireGvisor(docker, 'cli/exec-runtime');

/** A workspace owned by a user (gVisor refuses a root-owned one), removed at the end. */
async function workspace(t: import('ava').ExecutionContext): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-exec-runtime-')));
  await chown(dir, 10001, 10001);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a runtime the engine lacks: one line saying how to set it up, exit 2, and no call of the batch runs', async (t) => {
  const ws = await workspace(t);
  const calls = [
    { name: 'write_file', args: { file_path: 'written.txt', content: 'x' } },
    { name: 'run_shell_command', args: { command: 'touch ran' } },
  ];
  const result = await runCli(['exec', '--workspace', ws, '--json', '--approval', 'yolo', '--sandbox', 'docker', '--runtime', 'toolcell-no-such-runtime'], {
    input: JSON.stringify(calls),
  });
  t.is(result.code, 2, result.stderr);
  t.is(result.stdout, '');
  t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
  t.regex(result.stderr, /no runtime named toolcell-no-such-runtime \(it has: [^)]*runc[^)]*\): register it in \/etc\/docker\/daemon\.json/);
  t.false(existsSync(join(ws, 'written.txt')), 'the file tool did not run');
  t.false(existsSync(join(ws, 'ran')), 'the command did not run');
  const bad = await runCli(['exec', '--workspace', ws, '--runtime', 'run sc'], { input: '[]' });
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--runtime <name>.*must be a runtime name/);
});

test('--runtime runsc runs the commands under gVisor, and the telemetry of the call names the runtime', async (t) => {
  const ws = await workspace(t);
  const telemetry = join(ws, '..', `${ws.split('/').pop()}-telemetry.jsonl`);
  t.teardown(() => rm(telemetry, { force: true }));
  const result = await runCli(
    ['exec', '--workspace', ws, '--json', '--approval', 'yolo', '--sandbox', 'docker', '--runtime', 'runsc', '--telemetry-file', telemetry],
    { input: JSON.stringify([{ name: 'run_shell_command', args: { command: 'dmesg | head -1; uname -r' } }]) },
  );
  t.is(result.code, 0, result.stderr);
  const [part] = JSON.parse(result.stdout) as Array<{ functionResponse: { response: { output: string } } }>;
  t.regex(part!.functionResponse.response.output, /Starting gVisor/);
  const [event] = (await readFile(telemetry, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.deepEqual(event!['sandbox'], { backend: 'docker', runtime: 'runsc' });
});

test("settings' sandbox.runtime applies without the flag; the flag wins over it", async (t) => {
  const ws = await workspace(t);
  const settings = join(ws, '..', `${ws.split('/').pop()}-settings.json`);
  const { writeFile } = await import('node:fs/promises');
  await writeFile(settings, JSON.stringify({ sandbox: { runtime: 'runsc' } }));
  t.teardown(() => rm(settings, { force: true }));
  const input = JSON.stringify([{ name: 'run_shell_command', args: { command: 'dmesg 2>&1 | head -1' } }]);
  const fromSettings = await runCli(['exec', '--workspace', ws, '--json', '--approval', 'yolo', '--sandbox', 'docker', '--settings', settings], { input });
  t.regex(fromSettings.stdout, /Starting gVisor/, fromSettings.stderr);
  const fromFlag = await runCli(
    ['exec', '--workspace', ws, '--json', '--approval', 'yolo', '--sandbox', 'docker', '--settings', settings, '--runtime', 'runc'],
    {
      input,
    },
  );
  t.notRegex(fromFlag.stdout, /Starting gVisor/, fromFlag.stderr);
});
