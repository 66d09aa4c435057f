import test from 'ava';
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { replaceTool } from '../../../src/tools/builtin/replace.js';
import type { EditConfirmationDetails, FileDiff } from '../../../src/tools/tool.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

const signal = new AbortController().signal;

test('replaces the one occurrence', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'const a = 1;\nconst b = 2;\n' } });
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = 3;' });
  t.is(result.error, undefined);
  t.is(ws.read('a.ts'), 'const a = 1;\nconst b = 3;\n');
  t.regex(llmText(result), /Successfully modified file: .*a\.ts \(1 replacement\)/);
  t.regex((result.returnDisplay as FileDiff).fileDiff, /-const b = 2;\n\+const b = 3;/);
});

test('zero matches is edit_no_occurrence_found and changes nothing', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'x\n' } });
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'a.ts', old_string: 'y', new_string: 'z' });
  t.is(result.error?.type, 'edit_no_occurrence_found');
  t.is(ws.read('a.ts'), 'x\n');
});

test('several matches without allow_multiple is a mismatch naming the count', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'foo foo foo' } });
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'a.ts', old_string: 'foo', new_string: 'bar' });
  t.is(result.error?.type, 'edit_expected_occurrence_mismatch');
  t.regex(result.error?.message ?? '', /found 3/);
  t.is(ws.read('a.ts'), 'foo foo foo');
});

test('allow_multiple replaces every occurrence', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'foo foo foo' } });
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'a.ts', old_string: 'foo', new_string: 'bar', allow_multiple: true });
  t.is(ws.read('a.ts'), 'bar bar bar');
  t.regex(llmText(result), /3 replacements/);
});

test('replacement text is literal: $& and $1 are not patterns', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'price' } });
  await runTool(localTool(replaceTool, ws), { file_path: 'a.ts', old_string: 'price', new_string: '$& costs $1' });
  t.is(ws.read('a.ts'), '$& costs $1');
});

test('identical strings are edit_no_change', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'x' } });
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'a.ts', old_string: 'x', new_string: 'x' });
  t.is(result.error?.type, 'edit_no_change');
});

test('an empty old_string creates a missing file', async (t) => {
  const ws = useTempWorkspace(t);
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'new/file.ts', old_string: '', new_string: 'created\n' });
  t.is(result.error, undefined);
  t.is(ws.read('new/file.ts'), 'created\n');
});

test('an empty old_string on an existing file is refused', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'x' } });
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'a.ts', old_string: '', new_string: 'y' });
  t.is(result.error?.type, 'attempt_to_create_existing_file');
  t.is(ws.read('a.ts'), 'x');
});

test('a missing file with a non-empty old_string is file_not_found', async (t) => {
  const ws = useTempWorkspace(t);
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'nope.ts', old_string: 'a', new_string: 'b' });
  t.is(result.error?.type, 'file_not_found');
  t.false(ws.exists('nope.ts'));
});

test('CRLF files match LF strings and keep CRLF', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'win.txt': 'one\r\ntwo\r\nthree\r\n' } });
  await runTool(localTool(replaceTool, ws), { file_path: 'win.txt', old_string: 'one\ntwo', new_string: 'one\n2' });
  t.is(ws.read('win.txt'), 'one\r\n2\r\nthree\r\n');
});

test('keeps the file mode', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'x.sh': 'a' } });
  chmodSync(ws.path('x.sh'), 0o700);
  await runTool(localTool(replaceTool, ws), { file_path: 'x.sh', old_string: 'a', new_string: 'b' });
  t.is(statSync(ws.path('x.sh')).mode & 0o777, 0o700);
});

test('binary files are not edited', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'b.bin': Buffer.from([1, 0, 2, 0, 3]) } });
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'b.bin', old_string: '\u0001', new_string: 'x' });
  t.is(result.error?.type, 'file_is_binary');
});

test('confirm shows the diff; a failing edit needs no confirmation', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'alpha\n' } });
  const tool = localTool(replaceTool, ws);
  const details = (await tool.shouldConfirmExecute({ file_path: 'a.ts', old_string: 'alpha', new_string: 'beta' }, signal)) as EditConfirmationDetails;
  t.is(details.title, 'Confirm Edit: a.ts');
  t.is(details.newContent, 'beta\n');
  t.regex(details.fileDiff, /-alpha\n\+beta/);
  t.false(await tool.shouldConfirmExecute({ file_path: 'a.ts', old_string: 'zzz', new_string: 'y' }, signal));
  t.is(ws.read('a.ts'), 'alpha\n');
});

test('modified content from the user replaces the whole file', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': 'one\ntwo\n' } });
  const tool = localTool(replaceTool, ws);
  const params = { file_path: 'a.ts', old_string: 'two', new_string: 'TWO' };
  const updated = tool.modifiable?.createUpdatedParams({ originalContent: 'one\ntwo\n', modifiedContent: 'user version\n', params });
  t.deepEqual(updated, { file_path: 'a.ts', old_string: 'one\ntwo\n', new_string: 'user version\n', allow_multiple: false });
  await runTool(tool, updated);
  t.is(ws.read('a.ts'), 'user version\n');
});

test('edits through symlinks leading out are refused', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'a.ts': 'secret' } });
  ws.symlink('link.ts', join(ws.outside, 'a.ts'));
  const result = await runTool(localTool(replaceTool, ws), { file_path: 'link.ts', old_string: 'secret', new_string: 'x' });
  t.is(result.error?.type, 'path_not_in_workspace');
});
