import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, renameSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isToolcellError } from '../../src/errors.js';
import { readConfinedDirectory } from '../../src/fs/read-directory.js';
import { GitignoreFilter } from '../../src/fs/gitignore.js';
import { readConfinedFile } from '../../src/fs/read-confined.js';
import { openConfinedFile } from '../../src/fs/safe-open.js';
import { resolveWorkspacePath } from '../../src/fs/workspace-paths.js';
import { useTempWorkspace } from '../helpers/workspace.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return isToolcellError(error) ? error.code : `unexpected: ${String(error)}`;
  }
}

const LIMIT = { maxBytes: 1024 * 1024 };

test('reads a file inside the workspace', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'hello' } });
  const { bytes } = await readConfinedFile(ws.info, ws.path('a.txt'), LIMIT);
  t.is(bytes.toString(), 'hello');
});

test('a symlink in the last component is refused even when handed over directly', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': 'SECRET' } });
  ws.symlink('link.txt', join(ws.outside, 'secret.txt'));
  t.is(await codeOf(readConfinedFile(ws.info, ws.path('link.txt'), LIMIT)), 'path_not_in_workspace');
});

test('a parent directory swapped for a symlink after the check is caught by the fd check', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'sub/a.txt': 'inside' }, outsideFiles: { 'a.txt': 'SECRET' } });
  const checked = await resolveWorkspacePath(ws.info, 'sub/a.txt');
  // The race: between the check and the open, `sub` becomes a symlink to the outside.
  renameSync(ws.path('sub'), ws.path('sub.old'));
  symlinkSync(ws.outside, ws.path('sub'));
  t.is(await codeOf(readConfinedFile(ws.info, checked.real, LIMIT)), 'path_not_in_workspace');
});

test('a directory swapped for a symlink after the check cannot be listed', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'sub/a.txt': 'inside' }, outsideFiles: { 'secret.txt': 'S' } });
  const checked = await resolveWorkspacePath(ws.info, 'sub');
  renameSync(ws.path('sub'), ws.path('sub.old'));
  symlinkSync(ws.outside, ws.path('sub'));
  t.is(await codeOf(readConfinedDirectory(ws.info, checked.real)), 'path_not_in_workspace');
});

test('a directory is not opened as a file', async (t) => {
  const ws = useTempWorkspace(t, { directories: ['d'] });
  t.is(await codeOf(openConfinedFile(ws.info, ws.path('d'))), 'target_is_directory');
});

test('a FIFO is refused without blocking', async (t) => {
  const ws = useTempWorkspace(t);
  execFileSync('mkfifo', [ws.path('pipe')]);
  t.is(await codeOf(openConfinedFile(ws.info, ws.path('pipe'))), 'read_content_failure');
});

test('a missing file is file_not_found', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await codeOf(readConfinedFile(ws.info, ws.path('nope'), LIMIT)), 'file_not_found');
});

test('a file over the limit is file_too_large before it is read', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'big.bin': '' } });
  truncateSync(ws.path('big.bin'), 64 * 1024 * 1024);
  t.is(await codeOf(readConfinedFile(ws.info, ws.path('big.bin'), LIMIT)), 'file_too_large');
});

test('the size fstat gives is only a hint: a file with more content than it says is read to its end, and still held to the limit', async (t) => {
  // /proc files say size 0 and hold more: as a file that grew after its fstat. maps passes one 4 KiB read.
  const root = `/proc/${process.pid}`;
  const info = { roots: [root], stateDir: `${root}/.toolcell` };
  const expected = readFileSync(`${root}/maps`);
  t.true(expected.length > 4096, `maps is ${expected.length} bytes`);
  const { bytes } = await readConfinedFile(info, `${root}/maps`, { maxBytes: expected.length + 65536 });
  // The mappings change as the process runs; their start is stable.
  t.is(bytes.subarray(0, 200).toString(), expected.subarray(0, 200).toString());
  t.true(bytes.length > 4096);
  t.is(await codeOf(readConfinedFile(info, `${root}/maps`, { maxBytes: 100 })), 'file_too_large');
});

test('a file with a non-UTF-8 name can be read by its bytes', async (t) => {
  const ws = useTempWorkspace(t);
  const name = Buffer.concat([Buffer.from(`${ws.root}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]);
  writeFileSync(name, 'latin-1 name');
  const { bytes } = await readConfinedFile(ws.info, name, LIMIT);
  t.is(bytes.toString(), 'latin-1 name');
});

test('reads racing against a swapping parent directory never return outside content', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'sub/a.txt': 'inside' }, outsideFiles: { 'a.txt': 'SECRET' } });
  const swapper = spawn(process.execPath, ['-e', SWAPPER, ws.root, ws.outside], { stdio: 'ignore' });
  t.teardown(() => swapper.kill('SIGKILL'));
  const seen = new Set<string>();
  for (let i = 0; i < 400; i += 1) {
    try {
      const { bytes } = await readConfinedFile(ws.info, ws.path('sub/a.txt'), LIMIT);
      seen.add(bytes.toString());
    } catch (error) {
      seen.add(isToolcellError(error) ? error.code : String(error));
    }
  }
  t.false(seen.has('SECRET'), `outcomes: ${[...seen].join(', ')}`);
});

/** Swaps `<root>/sub` between the real directory and a symlink to the outside, forever. */
const SWAPPER = `
const fs = require('fs');
const [root, outside] = process.argv.slice(1);
for (;;) {
  try {
    fs.renameSync(root + '/sub', root + '/sub.real');
    fs.symlinkSync(outside, root + '/sub');
    fs.unlinkSync(root + '/sub');
    fs.renameSync(root + '/sub.real', root + '/sub');
  } catch {}
}`;

test('readConfinedFile and GitignoreFilter refuse bad options naming the field, before anything is read', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'hello' } });
  await t.throwsAsync(readConfinedFile(ws.info, ws.path('a.txt'), { maxBytes: -1 }), {
    instanceOf: RangeError,
    message: 'readConfinedFile: options.maxBytes must be at least 0',
  });
  t.throws(() => new GitignoreFilter({ workspace: ws.info, root: '/elsewhere' }), {
    instanceOf: TypeError,
    message: 'GitignoreFilter: options.root must be one of options.workspace.roots',
  });
});
