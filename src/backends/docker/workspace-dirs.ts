import { randomBytes } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { resolveSandboxIdentity, type SandboxIdentity } from './identity.js';
import type { SandboxUserPolicy } from './options.js';
import { PinError, PinnedDirectory, type FileIdentity } from './pinned-dir.js';
import type { PrivateMounts } from './private-mounts.js';
import { BACKGROUND_DIR_NAME, STATE_DIR_NAME } from './sandbox-paths.js';

/** One folder a container bind-mounts: the source the engine gets, and what it must turn out to be. */
export interface WorkspaceMount {
  /** Host path given to the engine: a private mount point of the checked folder, or its real path. */
  source: string;
  /** The checked folder's identity, which the supervisor compares with its mount point. */
  expected: FileIdentity;
}

/** What one container mounts from a workspace, checked and held open until it has started. */
export interface PreparedWorkspace {
  /** The workspace root with symlinks resolved (labels, messages). */
  root: string;
  /** What later containers of this workspace must find (pass back as `pin`). */
  pin: WorkspacePin;
  /** Who commands run as, decided from the opened root folder's owner. */
  identity: SandboxIdentity;
  workspace: WorkspaceMount;
  /** This container's own background-log folder, `<root>/.toolcell/background/<key>`. */
  background: WorkspaceMount & { hostPath: string; key: string };
  /**
   * Frees what only the start needed (private mount points, descriptors).
   * Returns the log folder's parent, still open, so the container's empty
   * log folder can be removed with it later.
   */
  release(): Promise<PinnedDirectory>;
}

const SYSTEM_ROOTS = ['/proc', '/sys', '/dev'];

/**
 * Refuses workspaces whose read-write mount would hand the container the
 * host: the root folder, kernel filesystems, or any folder holding the
 * Docker engine's socket (control of the engine is root on the host).
 */
function assertMountable(root: string, engineSocket: string | undefined): void {
  const inside = (path: string): boolean => path === root || path.startsWith(root === '/' ? '/' : `${root}/`);
  const socket = engineSocket ?? '/var/run/docker.sock';
  const sockets = [socket, socket.replace(/^\/var\/run\//, '/run/'), '/run/docker.sock', '/var/run/docker.sock'];
  if (root === '/' || SYSTEM_ROOTS.some((dir) => inside(dir) || root.startsWith(`${dir}/`)) || sockets.some(inside)) {
    throw new ToolcellError(
      ToolErrorType.POLICY_VIOLATION,
      `Refusing to mount ${root} into the sandbox: it is the root folder, a kernel filesystem, or holds the Docker engine's socket.`,
    );
  }
}

/** Sticky and writable by all: a folder every user shares (`/tmp`, `/var/tmp`). */
const SHARED_FOLDER_BITS = 0o1002;

/**
 * Refuses a folder every user of the host writes to (`/tmp` itself): its
 * owner is root, so commands would run as uid 0 among every user's files,
 * and other users' files are no workspace anyway.
 */
function assertNotShared(root: PinnedDirectory): void {
  if ((root.mode & SHARED_FOLDER_BITS) !== SHARED_FOLDER_BITS) return;
  throw new ToolcellError(
    ToolErrorType.POLICY_VIOLATION,
    `Refusing to mount ${root.path} into the sandbox: it is a folder every user shares (sticky and writable by all, like /tmp); use a folder of its own, e.g. one made with mktemp -d.`,
  );
}

function unavailable(message: string, cause?: unknown): ToolcellError {
  return new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `Refusing to start the sandbox: ${message}`, cause === undefined ? {} : { cause });
}

/** A workspace root as first resolved: its real path and the folder found there. */
export interface WorkspacePin {
  path: string;
  identity: FileIdentity;
}

/**
 * Opens the workspace root. The first time (no `pin`), symlinks in
 * `workspaceRoot` are resolved; later, the pinned real path is opened
 * without resolving anything again and must still be the same folder, so a
 * rename in an enclosing folder cannot make a later container of the same
 * workspace land elsewhere.
 */
async function pinRoot(workspaceRoot: string, pin: WorkspacePin | undefined): Promise<PinnedDirectory> {
  let root: string;
  if (pin !== undefined) {
    root = pin.path;
  } else {
    try {
      root = await realpath(workspaceRoot);
    } catch (error) {
      throw new ToolcellError(ToolErrorType.FILE_NOT_FOUND, `Workspace ${workspaceRoot} does not exist`, { cause: error });
    }
  }
  let opened: PinnedDirectory;
  try {
    opened = await PinnedDirectory.open(root);
  } catch (error) {
    if (error instanceof PinError && error.errno === 'ENOTDIR') {
      throw new ToolcellError(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Workspace ${workspaceRoot} is not a directory`);
    }
    throw unavailable(`the workspace ${root} changed while it was being checked: ${(error as Error).message}.`, error);
  }
  if (pin !== undefined && (opened.identity.dev !== pin.identity.dev || opened.identity.ino !== pin.identity.ino)) {
    await opened.close();
    throw unavailable(`the folder at ${root} is no longer the workspace this sandbox started with (it was replaced or renamed).`);
  }
  return opened;
}

/**
 * Checks a workspace for one container and prepares what it mounts:
 * opens the root folder (refusing one that moved while being opened),
 * refuses folders that would hand over the host, creates
 * `.toolcell/background/<key>/`, a log folder of this container's own, so
 * sessions never see each other's background logs, and, when toolcell is
 * root, gives it to the command identity. Every step after the root's open
 * goes through descriptors, never through a path a sandbox could swap.
 * With private mounts available, the engine gets mount points made from
 * those descriptors; otherwise it gets the paths, and the supervisor's
 * identity check refuses a container that mounted anything else.
 */
export async function prepareWorkspace(input: {
  workspaceRoot: string;
  /** The root as first resolved for this workspace (see pinRoot); absent the first time. */
  pin?: WorkspacePin;
  user: SandboxUserPolicy;
  engineSocket?: string;
  mounts: PrivateMounts;
}): Promise<PreparedWorkspace> {
  const root = await pinRoot(input.workspaceRoot, input.pin);
  const held: PinnedDirectory[] = [root];
  const targets: string[] = [];
  try {
    assertMountable(root.path, input.engineSocket);
    assertNotShared(root);
    const identity = resolveSandboxIdentity({ uid: root.uid, gid: root.gid }, input.user);
    const state = await root.child(STATE_DIR_NAME, { create: true, mode: 0o755 });
    held.push(state);
    const logs = await state.child(BACKGROUND_DIR_NAME, { create: true, mode: 0o700 });
    held.push(logs);
    const key = randomBytes(6).toString('hex');
    const own = await logs.child(key, { create: true, mode: 0o700 });
    held.push(own);
    if (process.getuid?.() === 0) await own.chown(identity.uid, identity.gid);
    const mount = async (folder: PinnedDirectory): Promise<string> => {
      const target = await input.mounts.bind(folder);
      if (target === undefined) return folder.path;
      targets.push(target);
      return target;
    };
    const workspaceSource = await mount(root);
    const backgroundSource = await mount(own);
    let released = false;
    return {
      root: root.path,
      pin: { path: root.path, identity: root.identity },
      identity,
      workspace: { source: workspaceSource, expected: root.identity },
      background: { source: backgroundSource, expected: own.identity, hostPath: own.path, key },
      async release() {
        if (!released) {
          released = true;
          await input.mounts.release(targets);
          await Promise.all(held.filter((folder) => folder !== logs).map((folder) => folder.close()));
        }
        return logs;
      },
    };
  } catch (error) {
    await input.mounts.release(targets);
    await Promise.all(held.map((folder) => folder.close()));
    if (error instanceof PinError) throw unavailable(`${error.message}.`, error);
    throw error;
  }
}
