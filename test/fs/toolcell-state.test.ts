import test from 'ava';
import { join } from 'node:path';
import { isToolcellError } from '../../src/errors.js';
import { writeFileAtomic } from '../../src/fs/atomic-write.js';
import { isToolcellStatePath } from '../../src/fs/toolcell-state.js';
import { useTempWorkspace } from '../helpers/workspace.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return isToolcellError(error) ? error.code : `unexpected: ${(error as Error).name}`;
  }
}

test('the state folder is every .toolcell below a root, in any case, and the configured stateDir', (t) => {
  const ws = useTempWorkspace(t);
  const inState = (relative: string): boolean => isToolcellStatePath(ws.info, join(ws.root, relative));
  for (const path of ['.toolcell', '.toolcell/settings.json', '.TOOLCELL/x', 'a/b/.toolcell', 'a/.Toolcell/tool-outputs/x.txt']) t.true(inState(path), path);
  for (const path of ['.', 'a', '.toolcell-x', 'toolcell', 'a/.toolcellrc', 'x.toolcell/y']) t.false(inState(path), path);
  t.false(isToolcellStatePath(ws.info, '/elsewhere/.toolcell/settings.json'), 'outside every root it is not this workspace state');
  const custom = { roots: [ws.root], stateDir: join(ws.root, 'var', 'state') };
  t.true(isToolcellStatePath(custom, join(ws.root, 'var', 'state', 'memory.md')));
});

test('writeFileAtomic refuses the state folder unless toolcell writes its own file', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await codeOf(writeFileAtomic(ws.info, ws.path('.toolcell/settings.json'), '{}', { createParents: true })), 'toolcell_state_read_only');
  t.false(ws.exists('.toolcell'), 'nothing was created');
  await writeFileAtomic(ws.info, ws.path('.toolcell/memory.md'), 'm', { createParents: true, toolcellState: true });
  t.is(ws.read('.toolcell/memory.md'), 'm');
});
