import { chown, lstat, mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolcellError, ToolErrorType } from '../errors.js';
import type { SandboxIdentity } from './identity.js';
import { BACKGROUND_DIR_NAME, STATE_DIR_NAME } from './sandbox-paths.js';

/** Host paths a session's container mounts. */
export interface PreparedWorkspace {
  /** The workspace root with symlinks resolved: the bind mount's source. */
  root: string;
  /** `<root>/.toolcell/background`: background jobs' logs (host path). */
  backgroundDir: string;
}

async function ensureRealDirectory(path: string, mode: number): Promise<void> {
  try {
    await mkdir(path, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // Docker resolves symlinks in a bind mount's source on the host: a link
  // planted here would mount an arbitrary host folder into the sandbox.
  const info = await lstat(path);
  if (info.isSymbolicLink() || !info.isDirectory()) {
    throw new ToolcellError(
      ToolErrorType.SANDBOX_UNAVAILABLE,
      `Refusing to start the sandbox: ${path} is not a plain directory (a symlink or a file); remove it and retry.`,
    );
  }
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

/**
 * Resolves the workspace root and creates `.toolcell/background/` (never
 * through a symlink). When toolcell runs as root, the background folder is
 * given to the command identity so background jobs can create their logs.
 */
export async function prepareWorkspace(
  workspaceRoot: string,
  identity: SandboxIdentity,
  options: { engineSocket?: string } = {},
): Promise<PreparedWorkspace> {
  let root: string;
  try {
    root = await realpath(workspaceRoot);
  } catch (error) {
    throw new ToolcellError(ToolErrorType.FILE_NOT_FOUND, `Workspace ${workspaceRoot} does not exist`, { cause: error });
  }
  const rootInfo = await lstat(root);
  if (!rootInfo.isDirectory()) {
    throw new ToolcellError(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Workspace ${workspaceRoot} is not a directory`);
  }
  assertMountable(root, options.engineSocket);
  const stateDir = join(root, STATE_DIR_NAME);
  const backgroundDir = join(stateDir, BACKGROUND_DIR_NAME);
  await ensureRealDirectory(stateDir, 0o755);
  await ensureRealDirectory(backgroundDir, 0o700);
  if (process.getuid?.() === 0) {
    const info = await lstat(backgroundDir);
    if (info.uid !== identity.uid || info.gid !== identity.gid) await chown(backgroundDir, identity.uid, identity.gid);
  }
  return { root, backgroundDir };
}
