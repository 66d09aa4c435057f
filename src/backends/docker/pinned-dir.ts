import { constants } from 'node:fs';
import { mkdir, open, readlink, rmdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** A file's identity as stat reports it: the same inside a container that bind-mounts it. */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Why a folder could not be pinned (a symlink, a file, moved while being opened, missing). */
export class PinError extends Error {
  readonly errno: string | undefined;
  constructor(message: string, errno?: string) {
    super(message);
    this.name = 'PinError';
    this.errno = errno;
  }
}

/**
 * An open folder, and what was checked about it. Paths name a folder only
 * until someone renames it; a descriptor keeps naming the same folder. Every
 * operation below goes through the descriptor (`/proc/self/fd/N/name` is
 * `openat`/`mkdirat` relative to it), so a symlink or folder swapped into a
 * path after the check cannot redirect it.
 */
export class PinnedDirectory {
  readonly path: string;
  readonly identity: FileIdentity;
  readonly uid: number;
  readonly gid: number;
  /** Type and permission bits, as stat reports them. */
  readonly mode: number;
  readonly #handle: FileHandle;

  private constructor(path: string, handle: FileHandle, stats: { dev: bigint; ino: bigint; uid: bigint; gid: bigint; mode: bigint }) {
    this.path = path;
    this.#handle = handle;
    this.identity = { dev: stats.dev, ino: stats.ino };
    this.uid = Number(stats.uid);
    this.gid = Number(stats.gid);
    this.mode = Number(stats.mode);
  }

  /**
   * Opens the folder at `realPath` (a path with symlinks already resolved)
   * without following a symlink in its last component, and checks with the
   * kernel that the folder opened really is at `realPath`: a component
   * swapped for a symlink between the caller's resolution and the open makes
   * it land elsewhere, which this refuses.
   */
  static async open(realPath: string): Promise<PinnedDirectory> {
    let handle: FileHandle;
    try {
      handle = await open(realPath, DIRECTORY_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new PinError(`${realPath} is not a plain folder (${code ?? 'error'})`, code);
    }
    return PinnedDirectory.#verify(realPath, handle);
  }

  static async #verify(path: string, handle: FileHandle): Promise<PinnedDirectory> {
    try {
      const where = await readlink(`/proc/self/fd/${handle.fd}`);
      if (where !== path) throw new PinError(`${path} moved while it was being opened (it is now at ${where})`);
      const stats = await handle.stat({ bigint: true });
      return new PinnedDirectory(path, handle, stats);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** `/proc/self/fd/N[/name]`: a path the kernel resolves through the descriptor. */
  viaFd(name?: string): string {
    const base = `/proc/self/fd/${this.#handle.fd}`;
    return name === undefined ? base : `${base}/${name}`;
  }

  /** The descriptor number (to hand to a child process). */
  get fd(): number {
    return this.#handle.fd;
  }

  /**
   * Opens the sub-folder `name` (one component), creating it with `mode`
   * when `create` is set. Refuses a symlink or a non-folder there.
   */
  async child(name: string, options: { create?: boolean; mode?: number } = {}): Promise<PinnedDirectory> {
    if (name.includes('/') || name === '.' || name === '..' || name === '') throw new TypeError(`child: ${JSON.stringify(name)} is not one path component`);
    if (options.create) {
      try {
        await mkdir(this.viaFd(name), { mode: options.mode ?? 0o755 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    let handle: FileHandle;
    try {
      handle = await open(this.viaFd(name), DIRECTORY_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new PinError(`${join(this.path, name)} is not a plain folder (${code ?? 'error'}); remove it and retry`, code);
    }
    try {
      const stats = await handle.stat({ bigint: true });
      return new PinnedDirectory(join(this.path, name), handle, stats);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Gives the folder to `uid:gid` (fchown: the folder itself, whatever its path names now). */
  async chown(uid: number, gid: number): Promise<void> {
    if (this.uid !== uid || this.gid !== gid) await this.#handle.chown(uid, gid);
  }

  /** Removes the empty sub-folder `name`; false when it is not empty or gone. */
  async removeEmptyChild(name: string): Promise<boolean> {
    try {
      await rmdir(this.viaFd(name));
      return true;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.#handle.close().catch(() => undefined);
  }
}

/** `DEV:INO`, as the supervisor's --expect-* options take it. */
export function formatIdentity(identity: FileIdentity): string {
  return `${identity.dev}:${identity.ino}`;
}
