import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execJson, runCli } from '../helpers/cli.js';

const workspace = mkdtempSync(join(tmpdir(), 'toolcell-cli-'));
writeFileSync(join(workspace, 'a.txt'), 'hello\n');

const badInputs: Array<[string, string, RegExp]> = [
  ['malformed JSON', '[{"name": ', /malformed JSON input/],
  ['an object instead of an array', '{"name":"read_file"}', /must be a JSON array/],
  ['a string item', '["read_file"]', /call 0: must be an object/],
  ['a missing name', '[{"args":{}}]', /call 0: "name" must be a non-empty string/],
  ['args that are not an object', '[{"name":"read_file","args":[1]}]', /"args" must be an object/],
  ['a non-string id', '[{"name":"read_file","id":7}]', /"id" must be a string/],
  ['duplicate ids', '[{"name":"a","id":"x"},{"name":"b","id":"x"}]', /duplicate id "x"/],
  ['empty input', '', /malformed JSON input/],
];

for (const [what, input, message] of badInputs) {
  test(`exit 2 with a one-line reason for ${what}`, async (t) => {
    const result = await runCli(['exec', '--workspace', workspace, '--json'], { input });
    t.is(result.code, 2);
    t.is(result.stdout, '');
    t.regex(result.stderr, message);
    t.is(result.stderr.trim().split('\n').length, 1);
  });
}

test('exit 2 for input over the size limit, without reading it all', async (t) => {
  const result = await runCli(['exec', '--workspace', workspace], { input: Buffer.alloc(65 * 1024 * 1024, 0x20) });
  t.is(result.code, 2);
  t.regex(result.stderr, /input is larger than/);
});

test('exit 2 for a workspace that does not exist', async (t) => {
  const result = await runCli(['exec', '--workspace', join(workspace, 'nope'), '--json'], { input: '[]' });
  t.is(result.code, 2);
  t.regex(result.stderr, /is not an existing folder/);
});

test('exit 2 for an unknown approval mode or sandbox, naming the option', async (t) => {
  const approval = await runCli(['exec', '--approval', 'sometimes'], { input: '[]' });
  t.is(approval.code, 2);
  t.regex(approval.stderr, /--approval.*must be one of default, autoEdit, yolo, plan/);
  const sandbox = await runCli(['exec', '--sandbox', 'vm'], { input: '[]' });
  t.is(sandbox.code, 2);
  t.regex(sandbox.stderr, /--sandbox.*must be docker, none or auto/);
});

test('an empty batch prints an empty array', async (t) => {
  const { parts } = await execJson(workspace, []);
  t.deepEqual(parts, []);
});

test('a file argument works like stdin, and Gemini functionCall parts are accepted', async (t) => {
  const file = join(workspace, 'calls.json');
  writeFileSync(file, JSON.stringify([{ functionCall: { name: 'nope', args: {}, id: 'c1' } }]));
  const result = await runCli(['exec', file, '--workspace', workspace, '--json']);
  t.is(result.code, 0);
  t.deepEqual(JSON.parse(result.stdout), [
    { functionResponse: { id: 'c1', name: 'nope', response: { error: 'Tool "nope" not found in registry.', errorType: 'tool_not_registered' } } },
  ]);
});

test('unknown tools, missing, wrongly typed and extra params are responses, not exit codes', async (t) => {
  const { parts } = await execJson(workspace, [
    { name: 'no_such_tool', args: {}, id: 'a' },
    { name: 'read_file', args: {}, id: 'b' },
    { name: 'read_file', args: { file_path: 42 }, id: 'c' },
    { name: 'read_file', args: { file_path: 'a.txt', surprise: true }, id: 'd' },
  ]);
  t.deepEqual(
    parts.map((p) => p.functionResponse?.id),
    ['a', 'b', 'c', 'd'],
  );
  t.regex(String(parts[0]!.functionResponse!.response['error']), /not found in registry/);
  for (const part of parts.slice(1)) t.regex(String(part.functionResponse!.response['error']), /Invalid parameters for read_file: params/);
  t.regex(String(parts[3]!.functionResponse!.response['error']), /surprise/);
});

test('--help documents the exit codes', async (t) => {
  const result = await runCli(['exec', '--help']);
  t.is(result.code, 0);
  t.regex(result.stdout, /130\s+interrupted by SIGINT/);
});

test('text output never passes escape sequences from tool names or arguments to the terminal', async (t) => {
  const result = await runCli(['exec', '--workspace', workspace], {
    input: JSON.stringify([
      { name: 'evil\u001b[2J', args: {} },
      { name: 'read_file', args: { file_path: 'x\u001b]52;c;cHduZWQ=\u0007' } },
    ]),
  });
  t.is(result.code, 0);
  // eslint-disable-next-line no-control-regex -- looking for escape bytes is the point.
  t.false(/[\u001b\u0007]/.test(result.stdout));
  t.regex(result.stdout, /tool_not_registered/);
});
