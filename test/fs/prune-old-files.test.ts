import test from 'ava';
import { mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { pruneOldFiles } from '../../src/fs/prune-old-files.js';
import { useTempWorkspace } from '../helpers/workspace.js';

const DAY = 24 * 60 * 60 * 1000;

/** Sets a file's modification time `days` days back. */
function age(path: string, days: number): void {
  const when = new Date(Date.now() - days * DAY);
  utimesSync(path, when, when);
}

test('regular files older than the limit go; newer files, folders and links stay', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'victim.txt': 'keep me\n' } });
  age(ws.write('outs/old.txt', 'old'), 8);
  age(ws.write('outs/old.txt.1a2b.partial', 'left by a crash'), 30);
  ws.write('outs/new.txt', 'new');
  mkdirSync(ws.path('outs/sub'));
  age(ws.path('outs/sub'), 30);
  ws.symlink('outs/link', join(ws.outside, 'victim.txt'));
  age(join(ws.outside, 'victim.txt'), 30);
  t.is(await pruneOldFiles(ws.path('outs'), { maxAgeMs: 7 * DAY }), 2);
  t.deepEqual(ws.list('outs').sort(), ['link', 'new.txt', 'sub']);
  t.true(ws.exists('../outside/victim.txt'));
});

test('a missing folder has nothing to prune', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await pruneOldFiles(ws.path('never/made'), { maxAgeMs: DAY }), 0);
});

test('a folder that is a link is refused, and nothing where it points is deleted', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'old.txt': 'host file\n' } });
  age(join(ws.outside, 'old.txt'), 30);
  ws.symlink('outs', ws.outside);
  await t.throwsAsync(pruneOldFiles(ws.path('outs'), { maxAgeMs: DAY }));
  t.deepEqual(readdirSync(ws.outside), ['old.txt']);
});
