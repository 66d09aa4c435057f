/**
 * On a machine with a Docker engine and no sandbox image, the first shell
 * call builds the image itself, with its progress on stderr, and then runs.
 *
 * The suite's own image must stay in place for the tests running beside
 * this one, so the test runs a copy of the package whose recipe differs by
 * one file that no layer uses: its tag is new (missing), its build is all
 * cache hits, and the tag is removed afterwards.
 */
import anyTest from 'ava';
import { cp, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { packageRoot } from '../../../src/paths.js';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { requireDocker, makeWorkspace } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/first-use-build');

/** A runnable copy of the package (dist, sandbox recipe, package.json; node_modules linked) with a recipe of its own. */
async function packageCopy(marker: string): Promise<string> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-pkg-')));
  await cp(join(packageRoot, 'package.json'), join(root, 'package.json'));
  await cp(join(packageRoot, 'dist'), join(root, 'dist'), { recursive: true });
  await cp(join(packageRoot, 'sandbox'), join(root, 'sandbox'), { recursive: true, filter: (source) => !source.includes('__pycache__') });
  await writeFile(join(root, 'sandbox', 'first-use-test.txt'), `${marker}\n`);
  await symlink(join(packageRoot, 'node_modules'), join(root, 'node_modules'));
  await mkdir(join(root, 'dist', 'test'), { recursive: true });
  return root;
}

function run(bin: string, args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

test('the first shell call builds the missing image, showing progress on stderr, then runs the command', async (t) => {
  const marker = `first-use-${Date.now()}`;
  const root = await packageCopy(marker);
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const bin = join(root, 'dist', 'src', 'cli', 'bin.js');
  const status = await run(bin, ['sandbox', 'status', '--json'], '');
  const tag = (JSON.parse(status.stdout) as { image: { expected: string; present: boolean } }).image;
  t.false(tag.present, `the copy's image ${tag.expected} is missing before the call`);
  t.teardown(() =>
    createEngineClient()
      .getImage(tag.expected)
      .remove({ noprune: false })
      .then(
        () => undefined,
        () => undefined,
      ),
  );

  const workspace = await makeWorkspace(t);
  const calls = [{ name: 'run_shell_command', args: { command: `echo ${marker}-ran` } }];
  const result = await run(bin, ['exec', '--workspace', workspace, '--approval', 'yolo', '--sandbox', 'docker', '--json'], JSON.stringify(calls));
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, new RegExp(`${tag.expected} is not built yet: building it now`), 'the build announces itself');
  t.regex(result.stderr, /step \d+\/\d+: /, 'and shows its steps');
  t.regex(result.stderr, new RegExp(`built ${tag.expected.replace(/[.:]/g, '\\$&')}, \\d+ MB`), 'and its result');
  const response = (JSON.parse(result.stdout) as Array<{ functionResponse: { response: { output?: string } } }>)[0]?.functionResponse.response;
  t.regex(response?.output ?? '', new RegExp(`${marker}-ran`), 'then the command ran in the new image');
  const after = JSON.parse((await run(bin, ['sandbox', 'status', '--json'], '')).stdout) as { image: { present: boolean } };
  t.true(after.image.present);
});
