import { chown, mkdir, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { TenantLimits } from '../admission/limits.js';
import { overlaps, realFolder } from './workspace-overlap.js';
import { giveWorkspaceTo } from './workspace-owner.js';

/** A tenant's workspace, ready for its sessions; `release` when the tenant's last session is gone. */
export interface PreparedWorkspace {
  path: string;
  /**
   * The uid and gid the tenant's commands run as, and its file tools create
   * files as: the tenant's own. Undefined where the server cannot give the
   * tenant a uid (not root: the folder's owner, the server's user, for every
   * tenant).
   */
  owner?: { uid: number; gid: number };
  release(): Promise<void>;
}

/**
 * Makes a tenant's workspace ready for `owner`, the tenant's uid and gid:
 * the default makes a folder, and a disk cap (a loop-mounted filesystem
 * sized to `limits.diskBytes`) plugs in here.
 */
export type PrepareWorkspace = (tenant: string, limits: TenantLimits, owner: { uid: number; gid: number }) => Promise<PreparedWorkspace>;

/** Where a tenant's workspace is without a `workspace` of its own: `<data-dir>/tenants/<name>/workspace`. */
export function defaultWorkspacePath(dataDir: string, tenant: string): string {
  return join(dataDir, 'tenants', tenant, 'workspace');
}

/**
 * The default preparer: creates the folder and keeps it across restarts. No
 * disk cap. Its parents are 0700, so nobody else on the host reaches it.
 * As root, the folder belongs to the tenant's uid: a default one (in the
 * data directory) is given to it whole (giveWorkspaceTo); a folder the
 * operator named in the tenants file is made for the tenant when missing,
 * and otherwise left as the operator made it, with one line when its
 * owner is not the tenant (the tenant's commands run as the tenant's uid
 * all the same, and write only where that uid may). Not root, no tenant
 * can have a uid of its own: commands run as the folder's owner.
 */
export function folderWorkspace(options: {
  dataDir: string;
  workspaceOf: (tenant: string) => string | undefined;
  onLog?: (message: string) => void;
}): PrepareWorkspace {
  const warned = new Set<string>();
  return async (tenant, _limits, owner) => {
    const own = options.workspaceOf(tenant);
    // Checked when the tenants file was read; again here, at use, in case a symlink on its way changed since.
    if (own !== undefined && overlaps(await realFolder(own), await realFolder(options.dataDir))) {
      // No path in the message: it reaches the tenant as the reason its session did not open.
      throw new ToolcellError(ToolErrorType.INVALID_WORKSPACE, `Tenant ${tenant}'s workspace overlaps the server's data directory; the operator must move it`);
    }
    const path = own ?? defaultWorkspacePath(options.dataDir, tenant);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const made = await mkdir(path, { mode: 0o700 }).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
        return false;
      },
    );
    const real = await realpath(path);
    const release = async (): Promise<void> => {};
    if (process.geteuid?.() !== 0) return { path: real, release };
    if (own === undefined) await giveWorkspaceTo(real, owner);
    else if (made) await chown(real, owner.uid, owner.gid);
    else if ((await stat(real)).uid !== owner.uid && !warned.has(`${tenant}:${owner.uid}`)) {
      warned.add(`${tenant}:${owner.uid}`);
      options.onLog?.(
        `tenant ${tenant}'s workspace ${real} does not belong to its uid ${owner.uid}: its commands run as that uid and can write only where it may (chown -R ${owner.uid}:${owner.gid} ${real} gives it the folder)`,
      );
    }
    return { path: real, owner, release };
  };
}
