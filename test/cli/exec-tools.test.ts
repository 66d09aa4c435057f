import test from 'ava';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execJson, runCli } from '../helpers/cli.js';

function newWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-cli-tools-'));
  writeFileSync(join(dir, 'a.txt'), 'line one\nline two\nline three\n');
  return dir;
}

const outside = mkdtempSync(join(tmpdir(), 'toolcell-outside-'));
writeFileSync(join(outside, 'secret.txt'), 'top secret\n');

test('reads a file and a line range through the worker pool', async (t) => {
  const ws = newWorkspace();
  const { parts } = await execJson(ws, [
    { name: 'read_file', args: { file_path: 'a.txt' }, id: 'r1' },
    { name: 'read_file', args: { file_path: join(ws, 'a.txt'), start_line: 2, end_line: 2 }, id: 'r2' },
  ]);
  t.regex(String(parts[0]!.functionResponse!.response['output']), /line one[\s\S]*line three/);
  const ranged = String(parts[1]!.functionResponse!.response['output']);
  t.regex(ranged, /line two/);
  t.notRegex(ranged, /line one/);
});

for (const [mode, written, errorType] of [
  ['default', false, /needs confirmation/],
  ['plan', false, /not allowed in plan mode/],
  ['autoEdit', true, undefined],
  ['yolo', true, undefined],
] as const) {
  test(`write_file under --approval ${mode} ${written ? 'writes' : 'is refused and changes nothing'}`, async (t) => {
    const ws = newWorkspace();
    const { parts } = await execJson(ws, [{ name: 'write_file', args: { file_path: 'a.txt', content: 'replaced\n' } }], ['--approval', mode]);
    const response = parts[0]!.functionResponse!.response;
    t.is(readFileSync(join(ws, 'a.txt'), 'utf8'), written ? 'replaced\n' : 'line one\nline two\nline three\n');
    if (errorType) t.regex(String(response['error']), errorType);
    else t.is(response['error'], undefined);
  });
}

test('replace edits exactly one occurrence, keeps the mode, and text output shows a diff', async (t) => {
  const ws = newWorkspace();
  chmodSync(join(ws, 'a.txt'), 0o640);
  const result = await runCli(['exec', '--workspace', ws, '--approval', 'autoEdit'], {
    input: JSON.stringify([{ name: 'replace', args: { file_path: 'a.txt', old_string: 'line two', new_string: 'LINE 2' } }]),
  });
  t.is(result.code, 0);
  t.is(readFileSync(join(ws, 'a.txt'), 'utf8'), 'line one\nLINE 2\nline three\n');
  t.is(statSync(join(ws, 'a.txt')).mode & 0o777, 0o640);
  t.regex(result.stdout, /-line two/);
  t.regex(result.stdout, /\+LINE 2/);
});

test('replace with zero or several matches is an error naming the count and changes nothing', async (t) => {
  const ws = newWorkspace();
  const { parts } = await execJson(
    ws,
    [
      { name: 'replace', args: { file_path: 'a.txt', old_string: 'absent', new_string: 'x' }, id: 'zero' },
      { name: 'replace', args: { file_path: 'a.txt', old_string: 'line', new_string: 'x' }, id: 'many' },
    ],
    ['--approval', 'yolo'],
  );
  t.regex(String(parts[0]!.functionResponse!.response['error']), /0 occurrences|could not find|not found/i);
  t.regex(String(parts[1]!.functionResponse!.response['error']), /3/);
  t.is(readFileSync(join(ws, 'a.txt'), 'utf8'), 'line one\nline two\nline three\n');
});

test('paths outside the workspace are refused with path_not_in_workspace and touch nothing', async (t) => {
  const ws = newWorkspace();
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'link-file'));
  symlinkSync(outside, join(ws, 'link-dir'));
  const attempts = [
    { name: 'read_file', args: { file_path: '../secret.txt' } },
    { name: 'read_file', args: { file_path: join(outside, 'secret.txt') } },
    { name: 'read_file', args: { file_path: 'link-file' } },
    { name: 'read_file', args: { file_path: 'link-dir/secret.txt' } },
    { name: 'write_file', args: { file_path: 'link-file', content: 'pwned' } },
    { name: 'write_file', args: { file_path: 'link-dir/new.txt', content: 'pwned' } },
    { name: 'replace', args: { file_path: 'link-file', old_string: 'top', new_string: 'pwned' } },
    { name: 'list_directory', args: { dir_path: 'link-dir' } },
  ];
  const { parts } = await execJson(ws, attempts, ['--approval', 'yolo']);
  for (const [i, part] of parts.entries()) {
    const response = part.functionResponse!.response;
    t.is(response['output'], undefined, `call ${i} must fail`);
    t.regex(String(response['error']), /outside|not in (the )?workspace|workspace/i, `call ${i}`);
    t.notRegex(JSON.stringify(response), /top secret/);
  }
  t.is(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'top secret\n');
  t.deepEqual(readdirSync(outside), ['secret.txt']);
});

test('binary files and huge files give clear results, never raw bytes', async (t) => {
  const ws = newWorkspace();
  writeFileSync(join(ws, 'blob.bin'), Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 7]));
  writeFileSync(join(ws, 'huge.txt'), Buffer.alloc(30 * 1024 * 1024, 'a'));
  const { parts } = await execJson(ws, [
    { name: 'read_file', args: { file_path: 'blob.bin' } },
    { name: 'read_file', args: { file_path: 'huge.txt' } },
  ]);
  t.regex(JSON.stringify(parts[0]!.functionResponse!.response), /binary/i);
  t.regex(JSON.stringify(parts[1]!.functionResponse!.response), /too large|exceeds|limit/i);
  t.true(JSON.stringify(parts).length < 200_000);
});

test('an image comes back as inlineData after its functionResponse', async (t) => {
  const ws = newWorkspace();
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  writeFileSync(join(ws, 'pixel.png'), png);
  const { parts } = await execJson(ws, [{ name: 'read_file', args: { file_path: 'pixel.png' }, id: 'img' }]);
  t.is(parts[0]!.functionResponse!.id, 'img');
  t.is(parts[1]!.inlineData?.mimeType, 'image/png');
  t.deepEqual(Buffer.from(parts[1]!.inlineData!.data, 'base64'), png);
});

test('non-UTF-8 file names are listed and do not crash anything', async (t) => {
  const ws = newWorkspace();
  mkdirSync(join(ws, 'dir'));
  writeFileSync(Buffer.from(`${join(ws, 'dir')}/caf\xe9.txt`, 'latin1'), 'x');
  const { parts } = await execJson(ws, [{ name: 'list_directory', args: { dir_path: 'dir' } }]);
  t.truthy(parts[0]!.functionResponse!.response['output'] ?? parts[0]!.functionResponse!.response['error']);
  t.true(existsSync(join(ws, 'a.txt')));
});

test('toolcell tools --json lists the built-in FunctionDeclarations with parametersJsonSchema', async (t) => {
  const result = await runCli(['tools', '--json', '--workspace', newWorkspace()]);
  t.is(result.code, 0);
  const declarations = JSON.parse(result.stdout) as Array<{ name: string; parametersJsonSchema: { type: string } }>;
  const names = declarations.map((d) => d.name);
  for (const name of ['list_directory', 'read_file', 'write_file', 'replace', 'glob', 'grep_search', 'read_many_files', 'save_memory'])
    t.true(names.includes(name), name);
  t.deepEqual([...names].sort(), names);
  t.true(declarations.every((d) => d.parametersJsonSchema.type === 'object'));
});
