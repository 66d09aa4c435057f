import { execFile } from 'node:child_process';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { STATE_DIR_NAME } from '../../fs/toolcell-state.js';

const run = promisify(execFile);

/** How many paths one `chown` is given at once (well under any argv limit). */
const BATCH = 256;

/**
 * Gives a workspace toolcell manages for a tenant (its disk, or its default
 * folder in the data directory) to the tenant's uid and gid, so its
 * commands, which run as that uid, can use everything in it. Fast when the
 * root already belongs to the tenant (every workspace after its first use
 * under a uid); otherwise (a workspace from before tenants had uids, or a
 * uid edited by hand) every entry below the root is given first, the state
 * folder `.toolcell/` excepted (toolcell's), and the root last, so a walk cut
 * short is done again next time.
 *
 * The walk is GNU chown's (`chown -R -P -h`): it descends through
 * descriptors and never follows a symbolic link, so a link planted in the
 * tree, even while the walk runs, cannot make it give away a file outside
 * the workspace. Never used on a folder the operator named: those are the
 * operator's to give (see folderWorkspace).
 */
export async function giveWorkspaceTo(root: string, owner: { uid: number; gid: number }): Promise<void> {
  const info = await lstat(root);
  if (!info.isDirectory()) throw new Error(`${root} is not a folder`);
  if (info.uid === owner.uid && info.gid === owner.gid) return;
  const entries = (await readdir(root)).filter((name) => name !== STATE_DIR_NAME).map((name) => join(root, name));
  for (let i = 0; i < entries.length; i += BATCH) {
    await run('chown', ['-R', '-P', '-h', `${owner.uid}:${owner.gid}`, '--', ...entries.slice(i, i + BATCH)]);
  }
  await run('chown', ['-h', `${owner.uid}:${owner.gid}`, '--', root]);
}
