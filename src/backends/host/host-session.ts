import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolErrorType, ToolcellError } from '../../errors.js';
import type { ShellSession, SpawnOptions, SpawnedProcess } from '../backend.js';
import { spawnBackgroundProcess } from './background-process.js';
import { spawnPipeProcess } from './pipe-process.js';
import { killProcessTree } from './process-tree.js';
import { spawnPtyProcess } from './pty-process.js';
import { hostShell } from './shell-command.js';
import { DEFAULT_TERMINAL } from '../../contracts/defaults.js';

/** Environment names that mark a command's processes so they can all be found again. */
export const SESSION_MARKER_NAME = 'TOOLCELL_SESSION';
export const RUN_MARKER_NAME = 'TOOLCELL_RUN';

/**
 * A session on the host: commands run as this process's user, in the real
 * workspace, with no isolation beyond a private TMPDIR. Every process it
 * starts carries the session's marker, so `close` finds background jobs and
 * whatever they left behind.
 */
export class HostSession implements ShellSession {
  readonly id: string;
  readonly #workspaceRoot: string;
  readonly #shell = hostShell();
  readonly #marker = `${SESSION_MARKER_NAME}=${randomUUID()}`;
  readonly #scratch: string;
  readonly #processes = new Set<SpawnedProcess>();
  readonly #onClose: (() => void) | undefined;
  #backgroundJobs = 0;
  #closed = false;

  constructor(options: { sessionId: string; workspaceRoot: string; onClose?: () => void }) {
    this.id = options.sessionId;
    this.#onClose = options.onClose;
    this.#workspaceRoot = realpathSync(options.workspaceRoot);
    this.#scratch = mkdtempSync(join(tmpdir(), 'toolcell-host-'));
  }

  async spawn(options: SpawnOptions): Promise<SpawnedProcess> {
    if (this.#closed) throw new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `Shell session ${this.id} is closed.`);
    const cwd = this.#resolveCwd(options.cwd);
    const runMarker = `${RUN_MARKER_NAME}=${randomUUID()}`;
    const env = {
      ...options.env,
      TMPDIR: this.#scratch,
      [SESSION_MARKER_NAME]: this.#marker.slice(SESSION_MARKER_NAME.length + 1),
      [RUN_MARKER_NAME]: runMarker.slice(RUN_MARKER_NAME.length + 1),
    };
    const common = { shell: this.#shell, command: options.command, cwd, env, envMarker: runMarker };
    let spawned: SpawnedProcess;
    if (options.background) {
      const logPath = join(this.#scratch, `background-${++this.#backgroundJobs}.log`);
      spawned = await spawnBackgroundProcess({ ...common, logPath });
    } else if (options.mode === 'pipes') {
      spawned = await spawnPipeProcess({ ...common, ...(options.stdin ? { stdin: options.stdin } : {}) });
    } else {
      spawned = spawnPtyProcess({ ...common, cols: options.cols ?? DEFAULT_TERMINAL.cols, rows: options.rows ?? DEFAULT_TERMINAL.rows });
    }
    this.#processes.add(spawned);
    void spawned.exited.then(() => this.#processes.delete(spawned));
    return spawned;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose?.();
    await killProcessTree({ envMarker: this.#marker });
    await Promise.all([...this.#processes].map((p) => p.kill()));
    rmSync(this.#scratch, { recursive: true, force: true });
  }

  /** The working directory as a real path inside the workspace, or `path_not_in_workspace`. */
  #resolveCwd(cwd: string): string {
    const root = this.#workspaceRoot;
    const wanted = isAbsolute(cwd) ? cwd : resolve(root, cwd || '.');
    let real: string;
    try {
      real = realpathSync(wanted);
    } catch {
      throw new ToolcellError(ToolErrorType.FILE_NOT_FOUND, `Directory does not exist: ${cwd}`);
    }
    const rel = relative(root, real);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new ToolcellError(ToolErrorType.PATH_NOT_IN_WORKSPACE, `Directory is outside the workspace: ${cwd}`);
    }
    if (!statSync(real).isDirectory()) {
      throw new ToolcellError(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Not a directory: ${cwd}`);
    }
    return real;
  }
}
