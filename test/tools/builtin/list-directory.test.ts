import test from 'ava';
import { writeFileSync } from 'node:fs';
import { listDirectoryTool } from '../../../src/tools/builtin/list-directory.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

test('lists directories first, then files, each sorted', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'b.txt': '', 'a.txt': '', 'zdir/x': '', 'adir/y': '' } });
  const result = await runTool(localTool(listDirectoryTool, ws), { dir_path: '.' });
  t.is(llmText(result), 'Directory listing for .:\n[DIR] adir\n[DIR] zdir\na.txt\nb.txt');
  t.is(result.returnDisplay, 'Listed 4 item(s).');
});

test('lists a subdirectory by relative or absolute path', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'src/main.ts': '' } });
  const tool = localTool(listDirectoryTool, ws);
  t.is(llmText(await runTool(tool, { dir_path: 'src' })), 'Directory listing for src:\nmain.ts');
  t.is(llmText(await runTool(tool, { dir_path: ws.path('src') })), 'Directory listing for src:\nmain.ts');
});

test('hides .git and entries ignored by .gitignore, and counts them', async (t) => {
  const ws = useTempWorkspace(t, { files: { '.gitignore': 'dist/\n*.log\n', '.git/HEAD': '', 'dist/a.js': '', 'x.log': '', 'keep.ts': '' } });
  const text = llmText(await runTool(localTool(listDirectoryTool, ws), { dir_path: '.' }));
  t.is(text, 'Directory listing for .:\n.gitignore\nkeep.ts\n\n(2 ignored)');
});

test('applies nested .gitignore rules to a subdirectory listing', async (t) => {
  const ws = useTempWorkspace(t, { files: { '.gitignore': 'sub/secret.txt\n', 'sub/secret.txt': '', 'sub/open.txt': '' } });
  t.is(llmText(await runTool(localTool(listDirectoryTool, ws), { dir_path: 'sub' })), 'Directory listing for sub:\nopen.txt\n\n(1 ignored)');
});

test('the ignore globs hide matching names', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.md': '', 'b.ts': '', 'c.ts': '' } });
  const text = llmText(await runTool(localTool(listDirectoryTool, ws), { dir_path: '.', ignore: ['*.ts'] }));
  t.is(text, 'Directory listing for .:\na.md\n\n(2 ignored)');
});

test('an empty directory says so', async (t) => {
  const ws = useTempWorkspace(t, { directories: ['empty'] });
  t.is(llmText(await runTool(localTool(listDirectoryTool, ws), { dir_path: 'empty' })), 'Directory empty is empty.');
});

test('symlinks are listed by name, not followed', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': '' } });
  ws.symlink('out', ws.outside);
  t.is(llmText(await runTool(localTool(listDirectoryTool, ws), { dir_path: '.' })), 'Directory listing for .:\nout');
});

test('a name that is not UTF-8 is listed lossily and marked, without crashing', async (t) => {
  const ws = useTempWorkspace(t);
  writeFileSync(Buffer.concat([Buffer.from(`${ws.root}/caf`), Buffer.from([0xe9])]), '');
  t.is(llmText(await runTool(localTool(listDirectoryTool, ws), { dir_path: '.' })), 'Directory listing for .:\ncaf\ufffd (name is not valid UTF-8)');
});

test('directories outside the workspace cannot be listed', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': '' } });
  ws.symlink('out', ws.outside);
  const tool = localTool(listDirectoryTool, ws);
  for (const dir_path of ['..', '/', ws.outside, 'out', 'out/']) {
    const result = await runTool(tool, { dir_path });
    t.is(result.error?.type, 'path_not_in_workspace', dir_path);
    t.false(llmText(result).includes('secret.txt'));
  }
});

test('a file or a missing path is a clear error', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'f.txt': '' } });
  const tool = localTool(listDirectoryTool, ws);
  t.is((await runTool(tool, { dir_path: 'f.txt' })).error?.type, 'path_is_not_a_directory');
  t.is((await runTool(tool, { dir_path: 'missing' })).error?.type, 'file_not_found');
});
