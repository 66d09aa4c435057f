/**
 * A host command in pipes mode runs without the user's shell start-up files.
 * Node's stdio pipes are socket pairs, and Debian's bash sources ~/.bashrc
 * when stdin is a socket; a .bashrc that reads stdin then hung every call.
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnPipeProcess } from '../../../src/backends/host/pipe-process.js';
import { hostShell } from '../../../src/backends/host/shell-command.js';

test('pipes mode does not source ~/.bashrc, even one that waits on stdin', async (t) => {
  const home = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-home-')));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(home, '.bashrc'), 'touch "$HOME/sourced"; cat >/dev/null\n');
  const spawned = await spawnPipeProcess({
    shell: hostShell(),
    command: 'echo hi',
    cwd: home,
    // No SHLVL: bash reads the file for a socket stdin only at shell level 1, as a command from a service would run.
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home },
    stdin: new TextEncoder().encode('input nobody reads'),
    envMarker: 'TOOLCELL_TEST_MARK=1',
  });
  const chunks: string[] = [];
  spawned.onData((chunk) => chunks.push(Buffer.from(chunk).toString()));
  const status = await spawned.exited;
  t.is(status.exitCode, 0);
  t.is(chunks.join(''), 'hi\n');
  t.false(existsSync(join(home, 'sourced')), '~/.bashrc was sourced');
});
