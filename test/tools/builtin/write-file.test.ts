import test from 'ava';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileTool } from '../../../src/tools/builtin/write-file.js';
import type { EditConfirmationDetails, FileDiff } from '../../../src/tools/tool.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

const signal = new AbortController().signal;

test('creates a new file, with parent directories', async (t) => {
  const ws = useTempWorkspace(t);
  const result = await runTool(localTool(writeFileTool, ws), { file_path: 'a/b/new.txt', content: 'hello\n' });
  t.is(result.error, undefined);
  t.is(ws.read('a/b/new.txt'), 'hello\n');
  t.regex(llmText(result), /^Successfully created and wrote to new file: /);
  const diff = result.returnDisplay as FileDiff;
  t.is(diff.fileName, 'a/b/new.txt');
  t.is(diff.originalContent, null);
  t.regex(diff.fileDiff, /\+hello/);
});

test('overwrites an existing file atomically and keeps its mode', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'run.sh': 'echo old\n' } });
  chmodSync(ws.path('run.sh'), 0o755);
  const result = await runTool(localTool(writeFileTool, ws), { file_path: 'run.sh', content: 'echo new\n' });
  t.regex(llmText(result), /^Successfully overwrote file: /);
  t.is(ws.read('run.sh'), 'echo new\n');
  t.is(statSync(ws.path('run.sh')).mode & 0o777, 0o755);
  t.deepEqual(ws.list(), ['run.sh']);
  const diff = result.returnDisplay as FileDiff;
  t.is(diff.originalContent, 'echo old\n');
  t.regex(diff.fileDiff, /-echo old\n\+echo new/);
});

test('confirm proposes an edit with a unified diff and changes nothing', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'one\n' } });
  const tool = localTool(writeFileTool, ws);
  const details = (await tool.shouldConfirmExecute({ file_path: 'a.txt', content: 'two\n' }, signal)) as EditConfirmationDetails;
  t.is(details.type, 'edit');
  t.is(details.title, 'Confirm Write: a.txt');
  t.is(details.filePath, ws.path('a.txt'));
  t.is(details.originalContent, 'one\n');
  t.is(details.newContent, 'two\n');
  t.regex(details.fileDiff, /--- a\.txt\tCurrent\n\+\+\+ a\.txt\tProposed/);
  t.is(ws.read('a.txt'), 'one\n');
});

test('confirm returns false when the call would fail anyway', async (t) => {
  const ws = useTempWorkspace(t);
  t.false(await localTool(writeFileTool, ws).shouldConfirmExecute({ file_path: '../x.txt', content: '' }, signal));
});

test('the user can modify the proposed content', (t) => {
  const ws = useTempWorkspace(t);
  const tool = localTool(writeFileTool, ws);
  const params = { file_path: 'a.txt', content: 'model' };
  t.deepEqual(tool.modifiable?.createUpdatedParams({ originalContent: '', modifiedContent: 'user', params }), {
    file_path: 'a.txt',
    content: 'user',
  });
});

test('keeps a UTF-8 BOM', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'bom.txt': Buffer.from('\ufeffold', 'utf8') } });
  await runTool(localTool(writeFileTool, ws), { file_path: 'bom.txt', content: 'new' });
  t.deepEqual(readFileSync(ws.path('bom.txt')), Buffer.from('\ufeffnew', 'utf8'));
});

test('refuses paths outside the workspace and writes nothing there', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'target.txt': 'outside' } });
  ws.symlink('file-link', join(ws.outside, 'target.txt'));
  ws.symlink('dir-link', ws.outside);
  ws.symlink('dangling', join(ws.outside, 'new.txt'));
  const tool = localTool(writeFileTool, ws);
  for (const file_path of ['../outside/target.txt', join(ws.outside, 'target.txt'), 'file-link', 'dir-link/target.txt', 'dir-link/new.txt', 'dangling']) {
    t.is((await runTool(tool, { file_path, content: 'PWNED' })).error?.type, 'path_not_in_workspace', file_path);
  }
  t.is(readFileSync(join(ws.outside, 'target.txt'), 'utf8'), 'outside');
  t.deepEqual(ws.list('../outside'), ['target.txt']);
});

test('writing over a directory fails clearly', async (t) => {
  const ws = useTempWorkspace(t, { directories: ['d'] });
  t.is((await runTool(localTool(writeFileTool, ws), { file_path: 'd', content: 'x' })).error?.type, 'target_is_directory');
});

test('a cancelled write leaves the old content and no temp file', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'old' } });
  const controller = new AbortController();
  controller.abort();
  const result = await runTool(localTool(writeFileTool, ws), { file_path: 'a.txt', content: 'new' }, controller.signal);
  t.is(result.error?.type, 'cancelled');
  t.is(ws.read('a.txt'), 'old');
  t.deepEqual(ws.list(), ['a.txt']);
});
