import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { sharedMountHelper } from './mount-helper.js';
import { formatIdentity, type PinnedDirectory } from './pinned-dir.js';

/** Where toolcell makes its private mount points: root-only, out of every sandbox's reach. */
export const PRIVATE_MOUNT_ROOT = '/run/toolcell/mounts';

/**
 * Bind mounts made from open folder descriptors, as the engine's bind
 * sources. The engine resolves a source path when the container starts; a
 * path under PRIVATE_MOUNT_ROOT names exactly the folder toolcell opened and
 * checked, because `mount --bind /proc/self/fd/3` takes the descriptor's
 * folder, not a path, and no sandbox can rename anything under
 * PRIVATE_MOUNT_ROOT. Needs root (CAP_SYS_ADMIN) and the engine in the same
 * mount namespace; `available` says whether the first try worked.
 *
 * Measured here: preparing a workspace for a container takes 9-10 ms with
 * private mounts against 1.3 ms without (two `mount` runs and one `umount`),
 * beside the 250-300 ms a container start costs. mount(8) runs in a
 * long-lived helper (mount-helper.ts), never forked from this process.
 */
export class PrivateMounts {
  #available: boolean;
  /** A mount worked once: mounts work here, so a later failure is that start's, not a reason to stop using them. */
  #proven = false;

  constructor(options: { enabled: boolean }) {
    this.#available = options.enabled && process.getuid?.() === 0;
  }

  /** False when not root, or once a mount failed (the verification in the container still guards). */
  get available(): boolean {
    return this.#available;
  }

  /** Stops using private mounts (e.g. the engine cannot see them). */
  disable(): void {
    this.#available = false;
  }

  /** Mounts `folder` at a new private mount point and returns its path; undefined when unavailable. */
  async bind(folder: PinnedDirectory): Promise<string | undefined> {
    if (!this.#available) return undefined;
    // Named after this process, so a later start can tell the leftovers of a crashed one (removeStale).
    const target = join(PRIVATE_MOUNT_ROOT, `${process.pid}-${randomBytes(8).toString('hex')}`);
    try {
      await mkdir(PRIVATE_MOUNT_ROOT, { recursive: true, mode: 0o700 });
      await mkdir(target, { mode: 0o700 });
      // The descriptor's folder, not a path (the helper runs mount(8) with --no-canonicalize).
      await sharedMountHelper().bindDescriptor(folder.fd, target);
      // The helper names the descriptor by number: had it been closed and the number reused, the
      // mount would show another folder. What is mounted must be the folder that was checked.
      const mounted = await stat(target, { bigint: true });
      if (mounted.dev !== folder.identity.dev || mounted.ino !== folder.identity.ino) {
        await sharedMountHelper().detach(target);
        throw new Error(`the mount point shows ${mounted.dev}:${mounted.ino}, not the checked folder ${formatIdentity(folder.identity)}`);
      }
      this.#proven = true;
      return target;
    } catch (error) {
      await rmdir(target).catch(() => undefined);
      // Falling back to path mounts after mounts worked would quietly drop their protection (and
      // gVisor needs them): this start fails instead, with the reason.
      if (this.#proven)
        throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `Cannot make the workspace's private mount point: ${(error as Error).message}`, {
          cause: error,
        });
      this.#available = false;
      return undefined;
    }
  }

  /**
   * Detaches the mount points of toolcell processes that are gone (killed
   * between a mount and its release). Best effort; needs root.
   */
  static async removeStale(): Promise<void> {
    if (process.getuid?.() !== 0) return;
    const names = await readdir(PRIVATE_MOUNT_ROOT).catch(() => [] as string[]);
    const stale = names.filter((name) => {
      const pid = Number(/^(\d+)-/.exec(name)?.[1]);
      if (!Number.isInteger(pid) || pid === process.pid) return false;
      try {
        process.kill(pid, 0);
        return false;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'ESRCH';
      }
    });
    await new PrivateMounts({ enabled: true }).release(stale.map((name) => join(PRIVATE_MOUNT_ROOT, name)));
  }

  /**
   * Detaches mount points once the container has started: its own mount
   * namespace keeps what it mounted. Best effort.
   */
  async release(targets: string[]): Promise<void> {
    if (targets.length === 0) return;
    await Promise.all(
      targets.map((target) =>
        sharedMountHelper()
          .detach(target)
          .catch(() => undefined),
      ),
    );
    await Promise.all(targets.map((target) => rmdir(target).catch(() => undefined)));
  }
}
