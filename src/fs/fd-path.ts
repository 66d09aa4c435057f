import { existsSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { sep } from 'node:path';

let procFdAvailable: boolean | undefined;

/** True when `/proc/self/fd` exists (Linux), so an open fd's real path can be read back. */
export function canResolveOpenFds(): boolean {
  procFdAvailable ??= existsSync('/proc/self/fd');
  return procFdAvailable;
}

/**
 * A path that names exactly the object behind `fd`. Opening `<fdPath>/<name>`
 * resolves `name` inside that directory even if its old path was since
 * swapped for a symlink: it is `openat(fd, name)` without a native addon.
 */
export function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/** Where the kernel says `fd` points, as raw bytes (file names need not be UTF-8). */
export async function openedPathBytes(fd: number): Promise<Buffer> {
  return readlink(fdPath(fd), { encoding: 'buffer' });
}

/** True when the byte path `path` is `root` or below it. */
export function bytesInsideRoot(root: string, path: Buffer): boolean {
  const rootBytes = Buffer.from(root);
  if (path.equals(rootBytes)) return true;
  const prefix = root.endsWith(sep) ? rootBytes : Buffer.concat([rootBytes, Buffer.from(sep)]);
  return path.length > prefix.length && path.subarray(0, prefix.length).equals(prefix);
}

/** The root (of `roots`) containing the byte path `path`, or undefined. */
export function rootContainingBytes(roots: readonly string[], path: Buffer): string | undefined {
  return roots.find((root) => bytesInsideRoot(root, path));
}
