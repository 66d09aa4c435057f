import test from 'ava';
import { utimesSync, writeFileSync } from 'node:fs';
import { GLOB_MAX_RESULTS, globTool, sortByRecency } from '../../../src/tools/builtin/glob.js';
import { llmText, localTool, runTool, useTempWorkspace, type TempWorkspace } from '../../helpers/workspace.js';

const DAY = 24 * 60 * 60 * 1000;

function paths(text: string): string[] {
  return text.split('\n').filter((line) => line.startsWith('/'));
}

function age(ws: TempWorkspace, relative: string, msAgo: number): void {
  const when = new Date(Date.now() - msAgo);
  utimesSync(ws.path(relative), when, when);
}

test('finds matching files and returns absolute paths', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'src/a.ts': '', 'src/deep/b.ts': '', 'src/c.js': '', 'top.ts': '' } });
  const result = await runTool(localTool(globTool, ws), { pattern: 'src/**/*.ts' });
  t.deepEqual(paths(llmText(result)).sort(), [ws.path('src/a.ts'), ws.path('src/deep/b.ts')]);
  t.regex(llmText(result), /^Found 2 file\(s\) matching "src\/\*\*\/\*\.ts"/);
});

test('recent files come first, newest first; older ones alphabetically', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'old-b.md': '', 'old-a.md': '', 'new.md': '', 'newer.md': '' } });
  age(ws, 'old-b.md', 3 * DAY);
  age(ws, 'old-a.md', 2 * DAY);
  age(ws, 'new.md', 60_000);
  age(ws, 'newer.md', 1_000);
  const result = await runTool(localTool(globTool, ws), { pattern: '*.md' });
  t.deepEqual(
    paths(llmText(result)),
    ['newer.md', 'new.md', 'old-a.md', 'old-b.md'].map((name) => ws.path(name)),
  );
});

test('sortByRecency keeps its rule for equal times', (t) => {
  const now = 10 * DAY;
  const sorted = sortByRecency(
    [
      { path: '/b', mtimeMs: now },
      { path: '/a', mtimeMs: now },
    ],
    now,
  );
  t.deepEqual(
    sorted.map((match) => match.path),
    ['/a', '/b'],
  );
});

test('matches case-insensitively and includes dotfiles', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'README.MD': '', '.env.md': '' } });
  t.is(paths(llmText(await runTool(localTool(globTool, ws), { pattern: '*.md' }))).length, 2);
});

test('respects .gitignore and skips node_modules and .git', async (t) => {
  const ws = useTempWorkspace(t, {
    files: { '.gitignore': 'build/\n', 'build/x.js': '', 'node_modules/m/i.js': '', '.git/hooks/h.js': '', 'src/app.js': '' },
  });
  const text = llmText(await runTool(localTool(globTool, ws), { pattern: '**/*.js' }));
  t.deepEqual(paths(text), [ws.path('src/app.js')]);
  t.regex(text, /1 path\(s\) ignored by \.gitignore/);
});

test('node_modules is searched when the pattern names it', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'node_modules/m/i.js': '' } });
  t.deepEqual(paths(llmText(await runTool(localTool(globTool, ws), { pattern: 'node_modules/**/*.js' }))), [ws.path('node_modules/m/i.js')]);
});

test('searches within dir_path, with patterns relative to it', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'pkg/a.ts': '', 'b.ts': '' } });
  t.deepEqual(paths(llmText(await runTool(localTool(globTool, ws), { pattern: '*.ts', dir_path: 'pkg' }))), [ws.path('pkg/a.ts')]);
});

test('caps the number of listed paths with a note', async (t) => {
  const ws = useTempWorkspace(t);
  for (let i = 0; i < GLOB_MAX_RESULTS + 5; i += 1) writeFileSync(ws.path(`f${i}.txt`), '');
  const text = llmText(await runTool(localTool(globTool, ws), { pattern: '*.txt' }));
  t.is(paths(text).length, GLOB_MAX_RESULTS);
  t.regex(text, /\.\.\. and 5 more file\(s\)/);
});

test('no match is a plain answer, not an error', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.ts': '' } });
  const result = await runTool(localTool(globTool, ws), { pattern: '*.py' });
  t.is(result.error, undefined);
  t.regex(llmText(result), /^No files found matching pattern "\*\.py"/);
});

test('does not follow symlinks out of the workspace', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.ts': '' } });
  ws.symlink('out', ws.outside);
  t.regex(llmText(await runTool(localTool(globTool, ws), { pattern: '**/*.ts' })), /^No files found/);
});

test('dir_path and patterns outside the workspace are refused', async (t) => {
  const ws = useTempWorkspace(t);
  const tool = localTool(globTool, ws);
  t.is((await runTool(tool, { pattern: '*', dir_path: '..' })).error?.type, 'path_not_in_workspace');
  t.is((await runTool(tool, { pattern: '/etc/*' })).error?.type, 'path_not_in_workspace');
  t.is((await runTool(tool, { pattern: '../*' })).error?.type, 'invalid_tool_params');
});

test('names that are not UTF-8 are left out with a note', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'ok.txt': '' } });
  writeFileSync(Buffer.concat([Buffer.from(`${ws.root}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]), '');
  const text = llmText(await runTool(localTool(globTool, ws), { pattern: '*.txt' }));
  t.deepEqual(paths(text), [ws.path('ok.txt')]);
  t.regex(text, /1 matching file\(s\) with names that are not valid UTF-8/);
});
