import test from 'ava';
import { join } from 'node:path';
import { isToolcellError } from '../../src/errors.js';
import { displayPath, hostPattern, inCallerTerms, isInsideRoot, resolveWorkspacePath, shownPath } from '../../src/fs/workspace-paths.js';
import { useTempWorkspace } from '../helpers/workspace.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return isToolcellError(error) ? error.code : `unexpected: ${String(error)}`;
  }
}

test('a relative path resolves against the primary root', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'src/a.ts': 'x' } });
  const resolved = await resolveWorkspacePath(ws.info, 'src/a.ts');
  t.is(resolved.real, ws.path('src/a.ts'));
  t.is(resolved.root, ws.root);
  t.true(resolved.exists);
});

test('an absolute path inside the workspace is accepted', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'x' } });
  t.is((await resolveWorkspacePath(ws.info, ws.path('a.txt'))).real, ws.path('a.txt'));
});

test('a missing file resolves to where it would be created', async (t) => {
  const ws = useTempWorkspace(t);
  const resolved = await resolveWorkspacePath(ws.info, 'new/dir/file.txt');
  t.is(resolved.real, ws.path('new/dir/file.txt'));
  t.false(resolved.exists);
});

test('.. that climbs out of the workspace is refused', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await codeOf(resolveWorkspacePath(ws.info, '../outside/secret.txt')), 'path_not_in_workspace');
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'a/../../x')), 'path_not_in_workspace');
});

test('.. that stays inside the workspace is fine', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a/b.txt': 'x' } });
  t.is((await resolveWorkspacePath(ws.info, 'a/../a/b.txt')).real, ws.path('a/b.txt'));
});

test('an absolute path outside every root is refused', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await codeOf(resolveWorkspacePath(ws.info, '/etc/passwd')), 'path_not_in_workspace');
  t.is(await codeOf(resolveWorkspacePath(ws.info, ws.outside)), 'path_not_in_workspace');
});

test('a sibling directory sharing the root as a name prefix is outside', async (t) => {
  const ws = useTempWorkspace(t);
  t.false(isInsideRoot(ws.root, `${ws.root}-other/x`));
  t.is(await codeOf(resolveWorkspacePath(ws.info, `${ws.root}-other/x`)), 'path_not_in_workspace');
});

test('a symlinked file pointing out is refused', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': 's' } });
  ws.symlink('link.txt', join(ws.outside, 'secret.txt'));
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'link.txt')), 'path_not_in_workspace');
});

test('a file below a symlinked directory pointing out is refused', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': 's' } });
  ws.symlink('dir', ws.outside);
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'dir/secret.txt')), 'path_not_in_workspace');
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'dir/new-file.txt')), 'path_not_in_workspace');
});

test('a dangling symlink pointing out is refused', async (t) => {
  const ws = useTempWorkspace(t);
  ws.symlink('dangling', join(ws.outside, 'does-not-exist'));
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'dangling')), 'path_not_in_workspace');
});

test('a relative symlink climbing out is refused', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': 's' } });
  ws.symlink('sub/link', '../../outside/secret.txt');
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'sub/link')), 'path_not_in_workspace');
});

test('a symlink pointing inside the workspace resolves to its target', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'real/a.txt': 'x' } });
  ws.symlink('alias', 'real');
  const resolved = await resolveWorkspacePath(ws.info, 'alias/a.txt');
  t.is(resolved.real, ws.path('real/a.txt'));
});

test('a symlink loop is refused', async (t) => {
  const ws = useTempWorkspace(t);
  ws.symlink('loop-a', 'loop-b');
  ws.symlink('loop-b', 'loop-a');
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'loop-a')), 'path_not_in_workspace');
});

test('empty paths and NUL bytes are invalid params', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await codeOf(resolveWorkspacePath(ws.info, '')), 'invalid_tool_params');
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'a\0b')), 'invalid_tool_params');
});

test('a file used as a directory is path_is_not_a_directory', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'x' } });
  t.is(await codeOf(resolveWorkspacePath(ws.info, 'a.txt/b')), 'path_is_not_a_directory');
});

test('any of several roots may hold an absolute path', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'b.txt': 'x' } });
  const info = { roots: [ws.root, ws.outside], stateDir: ws.info.stateDir };
  const resolved = await resolveWorkspacePath(info, join(ws.outside, 'b.txt'));
  t.is(resolved.root, ws.outside);
});

test('displayPath shows paths relative to the primary root', (t) => {
  const info = { roots: ['/w'], stateDir: '/w/.toolcell' };
  t.is(displayPath(info, '/w/a/b'), 'a/b');
  t.is(displayPath(info, '/w'), '.');
  t.is(displayPath(info, '/x/y'), '/x/y');
});

test('/workspace, the sandbox’s name for the primary root, is accepted locally too; climbing out of it is not', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'src/a.ts': 'x' } });
  t.is((await resolveWorkspacePath(ws.info, '/workspace/src/a.ts')).real, ws.path('src/a.ts'));
  t.is((await resolveWorkspacePath(ws.info, '/workspace')).real, ws.root);
  t.is(await codeOf(resolveWorkspacePath(ws.info, '/workspace/../etc/passwd')), 'path_not_in_workspace');
  t.is(await codeOf(resolveWorkspacePath(ws.info, '/workspacefoo/a.ts')), 'path_not_in_workspace');
  t.is((await resolveWorkspacePath(ws.info, ws.path('src/a.ts'))).real, ws.path('src/a.ts'), 'host paths still work locally');
  t.is(shownPath(ws.info, ws.path('src/a.ts')), ws.path('src/a.ts'), 'and are what it answers with');
});

test('a caller without host paths (a hosting tenant) names files only relatively or under /workspace, and is answered so', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'src/a.ts': 'x' } });
  const tenant = { ...ws.info, hideHostPaths: true };
  t.is((await resolveWorkspacePath(tenant, '/workspace/src/a.ts')).real, ws.path('src/a.ts'));
  t.is((await resolveWorkspacePath(tenant, 'src/a.ts')).real, ws.path('src/a.ts'));
  t.is(await codeOf(resolveWorkspacePath(tenant, ws.path('src/a.ts'))), 'path_not_in_workspace', 'the host path is no path of its');
  const refusal = await resolveWorkspacePath(tenant, '/etc/passwd').catch((error: Error) => error.message);
  t.is(refusal, 'Path is outside the workspace: /etc/passwd. Paths must be relative to the workspace root (/workspace) or absolute inside it.');
  t.is(shownPath(tenant, ws.path('src/a.ts')), '/workspace/src/a.ts');
  t.is(shownPath(tenant, ws.root), '/workspace');
  t.is(displayPath(tenant, ws.path('src/a.ts')), join('src', 'a.ts'));
  t.is(inCallerTerms(tenant, `Not a directory: ${ws.path('src/a.ts')}/x (in ${ws.root})`), 'Not a directory: /workspace/src/a.ts/x (in /workspace)');
  t.is(inCallerTerms(ws.info, `at ${ws.root}`), `at ${ws.root}`, 'a local caller keeps host paths');
  t.is(hostPattern(tenant, '/workspace/src/*.ts'), `${ws.root}/src/*.ts`);
  t.is(hostPattern(tenant, `${ws.root}/src/*.ts`), undefined);
});
