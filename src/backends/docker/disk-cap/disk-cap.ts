/**
 * A hard bound on the disk a workspace can take, enforced by the kernel's
 * filesystem code rather than by counting: writes past it fail with ENOSPC
 * (or EDQUOT), whoever makes them and however the space is held afterwards
 * (open, deleted, mapped, or only as descriptors in flight on a socket).
 *
 * A sandbox backend does not need to know which mechanism provides it; the
 * hosting layer makes one per tenant and mounts its `root` as the tenant's
 * workspace. Implementations:
 * - loop-image.ts: a filesystem image of its own per workspace, mounted
 *   through a loop device; its size is the cap. Needs root and a loop
 *   device, works on every kernel that has ext4 (this machine's included).
 * Project quotas (XFS `prjquota`, or ext4 with the `project` and `quota`
 * features) would bound a folder on a shared filesystem instead, but need
 * a kernel built with CONFIG_XFS_QUOTA or CONFIG_QFMT_V2 (this machine's
 * kernel has neither), so none is implemented.
 */

/** What the filesystem under a cap reports. */
export interface DiskUsage {
  usedBytes: number;
  freeBytes: number;
  usedFiles: number;
  freeFiles: number;
}

/** A folder whose disk use the kernel bounds. */
export interface DiskCap {
  /** The bounded folder (a mount point): use it as the workspace root. */
  readonly root: string;
  /** The block device mounted at `root` (`/dev/loop3`): its number is the folder's `st_dev`. */
  readonly device: string | undefined;
  /** The bound in bytes (the filesystem's size, less its own metadata), as of the last mount or resize. */
  readonly limitBytes: number;
  /** What is used and left, from statfs. */
  usage(): Promise<DiskUsage>;
  /**
   * Changes the bound to `limitBytes` (the backing store's size). Lowering it
   * below what is used is refused with `disk_limit_below_usage` and changes
   * nothing. Resolves 'in_use' (nothing changed) when the change needs the
   * folder unmounted and something else still holds it: a container's own
   * view of it, or, for growth, a host without the right to grow it mounted.
   */
  resize(limitBytes: number): Promise<'done' | 'in_use'>;
  /** Unmounts the folder and frees what held it mounted (the loop device); its data stays in the backing store for the next time. Idempotent. */
  release(): Promise<void>;
}
