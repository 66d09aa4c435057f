import { mkdir, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TenantLimits } from './limits.js';

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
    const path = options.workspaceOf(tenant) ?? defaultWorkspacePath(options.dataDir, tenant);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await mkdir(path, { mode: 0o770 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    return { path: await realpath(path), release: async () => {} };
  };
}
