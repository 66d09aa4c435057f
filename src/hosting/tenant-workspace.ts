import { mkdir, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ToolcellError, ToolErrorType } from '../errors.js';
import type { TenantLimits } from './limits.js';
import { overlaps, realFolder } from './workspace-overlap.js';

/** A tenant's workspace, ready for its sessions; `release` when the tenant's last session is gone. */
export interface PreparedWorkspace {
  path: string;
  release(): Promise<void>;
}

/**
 * Makes a tenant's workspace ready: the default makes a folder, and a disk
 * cap (a loop-mounted filesystem sized to `limits.diskBytes`) plugs in here.
 */
export type PrepareWorkspace = (tenant: string, limits: TenantLimits) => Promise<PreparedWorkspace>;

/** Where a tenant's workspace is without a `workspace` of its own: `<data-dir>/tenants/<name>/workspace`. */
export function defaultWorkspacePath(dataDir: string, tenant: string): string {
  return join(dataDir, 'tenants', tenant, 'workspace');
}

/**
 * The default preparer: creates the folder and keeps it across restarts. No
 * disk cap. Its parents are 0700, so nobody else on the host reaches it. The
 * folder itself is 0770: where a parent carries a default ACL (granting the
 * sandbox uid), the group bits become the ACL mask, and 0700 would mask the
 * sandbox uid's inherited entry to nothing.
 */
export function folderWorkspace(options: { dataDir: string; workspaceOf: (tenant: string) => string | undefined }): PrepareWorkspace {
  return async (tenant) => {
    const own = options.workspaceOf(tenant);
    // Checked when the tenants file was read; again here, at use, in case a symlink on its way changed since.
    if (own !== undefined && overlaps(await realFolder(own), await realFolder(options.dataDir))) {
      // No path in the message: it reaches the tenant as the reason its session did not open.
      throw new ToolcellError(ToolErrorType.INVALID_WORKSPACE, `Tenant ${tenant}'s workspace overlaps the server's data directory; the operator must move it`);
    }
    const path = own ?? defaultWorkspacePath(options.dataDir, tenant);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await mkdir(path, { mode: 0o770 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    return { path: await realpath(path), release: async () => {} };
  };
}
