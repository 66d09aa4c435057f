import test from 'ava';
import { chmodSync, chownSync, lstatSync, readFileSync, readlinkSync, renameSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isToolcellError } from '../../src/errors.js';
import { writeFileAtomic } from '../../src/fs/atomic-write.js';
import { resolveWorkspacePath } from '../../src/fs/workspace-paths.js';
import { useTempWorkspace } from '../helpers/workspace.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return isToolcellError(error) ? error.code : `unexpected: ${(error as Error).name}`;
  }
}

test('creates a new file and reports it as created', async (t) => {
  const ws = useTempWorkspace(t);
  const result = await writeFileAtomic(ws.info, ws.path('new.txt'), 'fresh');
  t.true(result.created);
  t.is(ws.read('new.txt'), 'fresh');
});

test('replaces an existing file and keeps its permission bits', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'run.sh': 'old' } });
  chmodSync(ws.path('run.sh'), 0o751);
  const result = await writeFileAtomic(ws.info, ws.path('run.sh'), 'new');
  t.false(result.created);
  t.is(ws.read('run.sh'), 'new');
  t.is(statSync(ws.path('run.sh')).mode & 0o7777, 0o751);
});

test('leaves no temp file behind', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'old' } });
  await writeFileAtomic(ws.info, ws.path('a.txt'), 'new');
  t.deepEqual(ws.list(), ['a.txt']);
});

test('creates missing parent directories only when asked', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await codeOf(writeFileAtomic(ws.info, ws.path('x/y/z.txt'), 'a')), 'file_not_found');
  t.false(ws.exists('x'));
  await writeFileAtomic(ws.info, ws.path('x/y/z.txt'), 'a', { createParents: true });
  t.is(ws.read('x/y/z.txt'), 'a');
});

test('refuses a path outside the workspace', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await codeOf(writeFileAtomic(ws.info, join(ws.outside, 'x.txt'), 'a')), 'path_not_in_workspace');
});

test('refuses to write over a directory', async (t) => {
  const ws = useTempWorkspace(t, { directories: ['d'] });
  t.is(await codeOf(writeFileAtomic(ws.info, ws.path('d'), 'a')), 'target_is_directory');
});

test('a parent swapped for a symlink after the check is refused and nothing is written outside', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'sub/a.txt': 'inside' }, outsideFiles: { 'a.txt': 'outside' } });
  const checked = await resolveWorkspacePath(ws.info, 'sub/a.txt');
  renameSync(ws.path('sub'), ws.path('sub.old'));
  symlinkSync(ws.outside, ws.path('sub'));
  t.is(await codeOf(writeFileAtomic(ws.info, checked.real, 'PWNED')), 'path_not_in_workspace');
  t.is(readFileSync(join(ws.outside, 'a.txt'), 'utf8'), 'outside');
  t.deepEqual(ws.list('../outside'), ['a.txt']);
});

test('a parent swapped for a symlink is not created through when making parents', async (t) => {
  const ws = useTempWorkspace(t);
  const checked = await resolveWorkspacePath(ws.info, 'made/deeper/a.txt');
  symlinkSync(ws.outside, ws.path('made'));
  t.is(await codeOf(writeFileAtomic(ws.info, checked.real, 'x', { createParents: true })), 'path_not_in_workspace');
  t.deepEqual(ws.list('../outside'), []);
});

test('a symlink at the target is replaced, never written through', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'target.txt': 'outside' } });
  // As if planted after the check: the checked real path now holds a symlink.
  ws.symlink('a.txt', join(ws.outside, 'target.txt'));
  await writeFileAtomic(ws.info, ws.path('a.txt'), 'new');
  t.is(readFileSync(join(ws.outside, 'target.txt'), 'utf8'), 'outside');
  t.false(lstatSync(ws.path('a.txt')).isSymbolicLink());
  t.is(ws.read('a.txt'), 'new');
});

test('an abort before writing leaves the old content and no temp file', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'old' } });
  const controller = new AbortController();
  controller.abort();
  t.is(await codeOf(writeFileAtomic(ws.info, ws.path('a.txt'), 'new', { signal: controller.signal })), 'unexpected: AbortError');
  t.is(ws.read('a.txt'), 'old');
  t.deepEqual(ws.list(), ['a.txt']);
});

test('an abort during a large write leaves the old content or the new, never a mix', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'big.txt': 'old' } });
  const content = 'n'.repeat(24 * 1024 * 1024);
  for (const delay of [0, 1, 5, 20]) {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), delay);
    await writeFileAtomic(ws.info, ws.path('big.txt'), content, { signal: controller.signal }).catch(() => undefined);
    const after = readFileSync(ws.path('big.txt'), 'utf8');
    t.true(after === 'old' || after === content, `mixed content of length ${after.length}`);
    t.deepEqual(ws.list(), ['big.txt']);
  }
});

test('writes through a symlinked workspace path land on the real file', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'real.txt': 'old' } });
  ws.symlink('alias.txt', 'real.txt');
  const resolved = await resolveWorkspacePath(ws.info, 'alias.txt');
  await writeFileAtomic(ws.info, resolved.real, 'new');
  t.is(ws.read('real.txt'), 'new');
  t.is(readlinkSync(ws.path('alias.txt')), 'real.txt');
});

test('as root, a replaced file keeps its owner and group, and new files and folders belong to the workspace owner', async (t) => {
  if (process.geteuid?.() !== 0) {
    t.pass('giving files to other users needs root');
    return;
  }
  const ws = useTempWorkspace(t, { files: { 'theirs.txt': 'old' } });
  chownSync(ws.path('theirs.txt'), 5000, 5001);
  chmodSync(ws.path('theirs.txt'), 0o640);
  const info = { ...ws.info, owner: { uid: 4242, gid: 4243 } };
  await writeFileAtomic(info, ws.path('theirs.txt'), 'new');
  const replaced = statSync(ws.path('theirs.txt'));
  t.deepEqual([replaced.uid, replaced.gid, replaced.mode & 0o7777], [5000, 5001, 0o640]);
  await writeFileAtomic(info, ws.path('made/deeper/new.txt'), 'fresh', { createParents: true });
  for (const path of ['made', 'made/deeper', 'made/deeper/new.txt']) {
    const made = statSync(ws.path(path));
    t.deepEqual([made.uid, made.gid], [4242, 4243], path);
  }
});
