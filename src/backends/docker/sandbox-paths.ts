import { SANDBOX_WORKSPACE_PATH } from '../../contracts/workspace-info.js';

/**
 * Fixed places inside every sandbox container. Commands see the workspace at
 * `workspace` (their working directory), a private tmpfs at `tmp` and `home`,
 * and nothing else writable.
 */
export const SANDBOX_PATHS = Object.freeze({
  /** The bind-mounted workspace root. */
  workspace: SANDBOX_WORKSPACE_PATH,
  /** A tmpfs owned by the command user; pass it as HOME. */
  home: '/home/sandbox',
  /** A tmpfs, private to the session. */
  tmp: '/tmp',
  /** The workspace's state folder, hidden by an empty read-only tmpfs. */
  stateDir: `${SANDBOX_WORKSPACE_PATH}/.toolcell`,
  /** Background jobs' logs: the only part of the state folder commands can write. */
  backgroundLogs: `${SANDBOX_WORKSPACE_PATH}/.toolcell/background`,
});

/**
 * The image's `sandbox` user. No command runs as it by default: commands
 * run as the workspace owner; when that is root, the supervisor takes this
 * uid as its real and saved uid, out of the commands' reach
 * (sandbox/supervisor/identity.py, GUARD_UID).
 */
export const SANDBOX_UID = 10001;
export const SANDBOX_GID = 10001;

/** The workspace's state folder name (shared with the rest of toolcell). */
export const STATE_DIR_NAME = '.toolcell';
export const BACKGROUND_DIR_NAME = 'background';

/** The supervisor inside the image. */
export const SUPERVISOR_PATH = '/opt/toolcell/supervisor/supervisor.py';
