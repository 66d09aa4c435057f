import test from 'ava';
import { writeFileSync } from 'node:fs';
import { GitignoreFilter } from '../../src/fs/gitignore.js';
import { emptyWalkReport, walkFiles, type WalkedFile } from '../../src/fs/walk-files.js';
import { useTempWorkspace, type TempWorkspace } from '../helpers/workspace.js';

async function collect(ws: TempWorkspace, start = ws.root, gitignore = true): Promise<{ files: WalkedFile[]; report: ReturnType<typeof emptyWalkReport> }> {
  const report = emptyWalkReport();
  const files: WalkedFile[] = [];
  const filter = gitignore ? new GitignoreFilter({ workspace: ws.info, root: ws.root }) : undefined;
  for await (const file of walkFiles({ workspace: ws.info, root: ws.root, start, report, ...(filter ? { gitignore: filter } : {}) })) {
    files.push(file);
  }
  return { files, report };
}

test("yields a directory's files before its subdirectories, in name order, skipping .git", async (t) => {
  const ws = useTempWorkspace(t, { files: { 'b.txt': '', 'a/z.txt': '', 'a/y/x.txt': '', '.git/config': '' } });
  const { files } = await collect(ws);
  t.deepEqual(
    files.map((file) => file.relativePath),
    ['b.txt', 'a/z.txt', 'a/y/x.txt'],
  );
});

test('respects .gitignore at the root and below, with negation', async (t) => {
  const ws = useTempWorkspace(t, {
    files: {
      '.gitignore': '*.log\nbuild/\n!keep.log\n',
      'app.log': '',
      'keep.log': '',
      'build/out.js': '',
      'src/main.ts': '',
      'src/.gitignore': 'generated.ts\n',
      'src/generated.ts': '',
      'src/nested/generated.ts': '',
    },
  });
  const { files, report } = await collect(ws);
  t.deepEqual(files.map((file) => file.relativePath).sort(), ['.gitignore', 'keep.log', 'src/.gitignore', 'src/main.ts'].sort());
  t.is(report.ignored, 4);
});

test('respects .git/info/exclude', async (t) => {
  const ws = useTempWorkspace(t, { files: { '.git/info/exclude': 'secret.txt\n', 'secret.txt': '', 'ok.txt': '' } });
  const { files } = await collect(ws);
  t.deepEqual(
    files.map((file) => file.relativePath),
    ['ok.txt'],
  );
});

test('never follows symlinks, to files or directories', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': '' }, outsideFiles: { 'secret.txt': '' } });
  ws.symlink('out-dir', ws.outside);
  ws.symlink('out-file', `${ws.outside}/secret.txt`);
  ws.symlink('in-file', 'a.txt');
  const { files, report } = await collect(ws);
  t.deepEqual(
    files.map((file) => file.relativePath),
    ['a.txt'],
  );
  t.is(report.symlinks, 3);
});

test('walks from a subdirectory with paths relative to it', async (t) => {
  const ws = useTempWorkspace(t, { files: { '.gitignore': 'src/skip.ts\n', 'src/a.ts': '', 'src/skip.ts': '', 'top.ts': '' } });
  const { files } = await collect(ws, ws.path('src'));
  t.deepEqual(
    files.map((file) => [file.relativePath, file.rootRelativePath]),
    [['a.ts', 'src/a.ts']],
  );
});

test('a file with a non-UTF-8 name is yielded by its bytes', async (t) => {
  const ws = useTempWorkspace(t, { directories: ['d'] });
  writeFileSync(Buffer.concat([Buffer.from(`${ws.root}/d/caf`), Buffer.from([0xe9])]), 'x');
  const { files, report } = await collect(ws);
  t.is(files.length, 1);
  t.false(files[0]?.validName);
  t.true(Buffer.isBuffer(files[0]?.path));
  t.is(report.nonUtf8Names, 1);
});

test('without a filter, ignored files are yielded too', async (t) => {
  const ws = useTempWorkspace(t, { files: { '.gitignore': '*.log\n', 'a.log': '' } });
  const { files } = await collect(ws, ws.root, false);
  t.deepEqual(
    files.map((file) => file.relativePath),
    ['.gitignore', 'a.log'],
  );
});
