import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { bytesInsideRoot, canResolveOpenFds, fdPath, openedPathBytes } from './fd-path.js';
import { openConfinedDirectory } from './safe-open.js';
import { findContainingRoot, notInWorkspace } from './workspace-paths.js';

/**
 * A directory inside the workspace held open for creating files in it.
 * `entry(name)` names a child through the held fd, so creating, renaming or
 * inspecting children cannot be redirected by swapping the directory's path.
 */
export interface WritableDirectory {
  /** A path for `name` inside this very directory. */
  entry(name: string): string;
  /** Throws `path_not_in_workspace` if the directory was moved out of its root meanwhile. */
  assertStillInside(): Promise<void>;
  /** fsync the directory (makes a rename durable); best effort. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Opens `directory` (a real path inside a root) for writing, creating missing
 * components when `create` is set. On Linux it walks down from the root one
 * name at a time, opening each relative to its parent's fd without following
 * symlinks, so no component can be a symlink, whenever it was planted.
 *
 * Throws ToolcellError: `path_not_in_workspace`, `file_not_found` (missing and
 * not `create`), `path_is_not_a_directory`.
 */
export async function openWritableDirectory(workspace: WorkspaceInfo, directory: string, options: { create: boolean }): Promise<WritableDirectory> {
  const root = findContainingRoot(workspace.roots, directory);
  if (root === undefined) throw notInWorkspace(workspace, directory);
  if (!canResolveOpenFds()) return openByPath(workspace, root, directory, options.create);

  let current = (await openConfinedDirectory(workspace, root)).handle;
  try {
    for (const name of relative(root, directory)
      .split(sep)
      .filter((part) => part !== '')) {
      const next = await openChild(current, name, options.create, directory, workspace.owner);
      await current.close();
      current = next;
    }
  } catch (error) {
    await current.close();
    throw error;
  }
  const handle = current;
  const held: WritableDirectory = {
    entry: (name) => `${fdPath(handle.fd)}/${name}`,
    async assertStillInside() {
      if (!bytesInsideRoot(root, await openedPathBytes(handle.fd))) throw notInWorkspace(workspace, directory);
    },
    sync: () => handle.sync().catch(() => {}),
    close: () => handle.close(),
  };
  await held.assertStillInside();
  return held;
}

async function openChild(parent: FileHandle, name: string, create: boolean, target: string, owner: WorkspaceInfo['owner']): Promise<FileHandle> {
  const path = `${fdPath(parent.fd)}/${name}`;
  let made = false;
  for (let attempt = 0; ; attempt += 1) {
    try {
      const handle = await open(path, DIRECTORY_FLAGS);
      // A folder made here belongs to the workspace's owner (given through its descriptor: whatever its path names now).
      if (made) await giveToOwner(handle, owner);
      return handle;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && create && attempt === 0) {
        made = await mkdir(path).then(
          () => true,
          (mkdirError: NodeJS.ErrnoException) => {
            if (mkdirError.code !== 'EEXIST') throw mkdirError;
            return false;
          },
        );
        continue;
      }
      if (code === 'ENOENT') throw new ToolcellError(ToolErrorType.FILE_NOT_FOUND, `No such directory: ${target}`);
      if (code === 'ENOTDIR' || code === 'ELOOP') {
        if ((await lstat(path).catch(() => undefined))?.isSymbolicLink()) {
          throw new ToolcellError(ToolErrorType.PATH_NOT_IN_WORKSPACE, `A directory in ${target} is a symbolic link; refusing to write through it.`);
        }
        throw new ToolcellError(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Not a directory: ${name} in ${target}`);
      }
      throw error;
    }
  }
}

/** Gives a file or folder toolcell made to the workspace's owner, when toolcell is root (WorkspaceInfo.owner). */
export async function giveToOwner(handle: FileHandle, owner: WorkspaceInfo['owner']): Promise<void> {
  if (owner === undefined || process.geteuid?.() !== 0) return;
  await handle.chown(owner.uid, owner.gid);
}

/** Without /proc: plain paths, re-checked with realpath. Narrower guarantee (see SECURITY.md). */
async function openByPath(workspace: WorkspaceInfo, root: string, directory: string, create: boolean): Promise<WritableDirectory> {
  if (create) await mkdir(directory, { recursive: true });
  const assertStillInside = async (): Promise<void> => {
    const real = await realpath(directory);
    if (real !== directory || findContainingRoot([root], real) === undefined) throw notInWorkspace(workspace, directory);
  };
  await assertStillInside();
  const { handle } = await openConfinedDirectory(workspace, directory);
  return {
    entry: (name) => `${directory}/${name}`,
    assertStillInside,
    sync: () => handle.sync().catch(() => {}),
    close: () => handle.close(),
  };
}
