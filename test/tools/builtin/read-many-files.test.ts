import test from 'ava';
import { truncateSync, writeFileSync } from 'node:fs';
import type { Part } from '@google/genai';
import { readManyFilesTool } from '../../../src/tools/builtin/read-many-files.js';
import type { ToolResult } from '../../../src/tools/tool.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

function separators(result: ToolResult): string[] {
  return [...llmText(result).matchAll(/^--- (.+) ---$/gm)].map((match) => match[1] as string);
}

function inlineParts(result: ToolResult): Part[] {
  return (result.llmContent as Array<Part | string>).filter((part): part is Part => typeof part !== 'string' && part.inlineData !== undefined);
}

test('concatenates matching text files with separators and an end marker', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'src/a.ts': 'A\n', 'src/b.ts': 'B\n', 'src/c.js': 'C\n' } });
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['src/**/*.ts'] });
  t.deepEqual(separators(result), [ws.path('src/a.ts'), ws.path('src/b.ts'), 'End of content']);
  t.regex(llmText(result), new RegExp(`--- ${ws.path('src/a.ts')} ---\n\nA\n`));
  t.regex(result.returnDisplay as string, /\*\*2 file\(s\)\*\*/);
});

test('a directory name includes everything below it', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'docs/a.md': 'a', 'docs/sub/b.md': 'b', 'other.md': 'o' } });
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['docs/'] });
  t.deepEqual(separators(result).slice(0, -1), [ws.path('docs/a.md'), ws.path('docs/sub/b.md')]);
});

test('exclude and .gitignore remove files; .git and node_modules are skipped', async (t) => {
  const ws = useTempWorkspace(t, {
    files: { '.gitignore': 'gen/\n', 'gen/x.ts': '', 'a.ts': '', 'a.test.ts': '', 'node_modules/m/i.ts': '', '.git/x.ts': '' },
  });
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['**/*.ts'], exclude: ['**/*.test.ts'] });
  t.deepEqual(separators(result).slice(0, -1), [ws.path('a.ts')]);
});

test('images named explicitly become inlineData; others are skipped with a note', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'img/logo.png': PNG, 'img/notes.txt': 'n', 'doc.pdf': '%PDF-1.4\n' } });
  const explicit = await runTool(localTool(readManyFilesTool, ws), { include: ['img/*.png', '*.pdf'] });
  t.deepEqual(
    inlineParts(explicit).map((part) => part.inlineData?.mimeType),
    ['application/pdf', 'image/png'],
  );
  const implicit = await runTool(localTool(readManyFilesTool, ws), { include: ['img/*'] });
  t.is(inlineParts(implicit).length, 0);
  t.deepEqual(separators(implicit).slice(0, -1), [ws.path('img/notes.txt')]);
  t.regex(implicit.returnDisplay as string, /logo\.png` \(image\/PDF files are only read when named explicitly/);
});

test('binary files are skipped with a note', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'text', 'b.bin': Buffer.from([0, 1, 2, 3]) } });
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['*'] });
  t.deepEqual(separators(result).slice(0, -1), [ws.path('a.txt')]);
  t.regex(result.returnDisplay as string, /b\.bin` \(binary file\)/);
});

test('files over the size limit are skipped, the rest still read', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'huge.txt': '', 'small.txt': 's' } });
  truncateSync(ws.path('huge.txt'), 21 * 1024 * 1024);
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['*.txt'] });
  t.deepEqual(separators(result).slice(0, -1), [ws.path('small.txt')]);
  t.regex(result.returnDisplay as string, /huge\.txt` \(File is too large/);
});

test('nothing matching is a plain answer', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': '' } });
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['*.py'] });
  t.is(result.error, undefined);
  t.is(result.llmContent, 'No files matching the criteria were found or all were skipped.');
});

test('never reads through symlinks out of the workspace', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': 'SECRET' } });
  ws.symlink('out', ws.outside);
  ws.symlink('link.txt', `${ws.outside}/secret.txt`);
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['**/*.txt', 'link.txt', 'out/secret.txt'] });
  t.false(llmText(result).includes('SECRET'));
});

test('patterns outside the workspace are refused', async (t) => {
  const ws = useTempWorkspace(t);
  const tool = localTool(readManyFilesTool, ws);
  t.is((await runTool(tool, { include: ['../outside/*'] })).error?.type, 'invalid_tool_params');
  t.is((await runTool(tool, { include: ['/etc/*'] })).error?.type, 'path_not_in_workspace');
});

test('absolute patterns inside the workspace work', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'x' } });
  const result = await runTool(localTool(readManyFilesTool, ws), { include: [ws.path('*.txt')] });
  t.deepEqual(separators(result).slice(0, -1), [ws.path('a.txt')]);
});

test('files with non-UTF-8 names are skipped with a note', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'ok.txt': 'ok' } });
  writeFileSync(Buffer.concat([Buffer.from(`${ws.root}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]), 'x');
  const result = await runTool(localTool(readManyFilesTool, ws), { include: ['*.txt'] });
  t.deepEqual(separators(result).slice(0, -1), [ws.path('ok.txt')]);
  t.regex(result.returnDisplay as string, /name is not valid UTF-8/);
});

test('an empty include list is rejected by validation', (t) => {
  const ws = useTempWorkspace(t);
  t.false(localTool(readManyFilesTool, ws).validateParams({ include: [] }).ok);
});
