import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';
import { DEFAULT_SNIFF_BYTES } from './output/binary-sniffer.js';
import type { OutputLimits } from './output/output-pipeline.js';
import { DEFAULT_RENDER_BUDGET_MS } from './output/parse-budget.js';
import { assertEnvName } from './environment.js';
import type { OpenedSession, ShellThreadSettings } from './protocol.js';
import type { SandboxMode } from './run-types.js';
import { ShellSessionHandle } from './session-handle.js';
import { ShellThreadClient } from './thread-client.js';
import { DEFAULT_KILL_GRACE_MS, DEFAULT_TERMINAL } from '../contracts/defaults.js';

/** Default size cap of a saved output's file. */
export const DEFAULT_SAVED_OUTPUT_MAX_BYTES = 64 * 1024 * 1024;
/** Smallest cap accepted: room for a screenful of lines before the closing line. */
export const MIN_SAVED_OUTPUT_MAX_BYTES = 1024;

/** Host variables the allowlist itself draws on (used for host sessions only). */
const HOST_BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL'] as const;

export interface ShellServiceOptions {
  /** Minimum time between two live-output updates of one command. Default 1000, as Gemini CLI: more often redraws the chat for little news. */
  liveUpdateIntervalMs?: number;
  /** Lines in a live-output update. Default 200. */
  liveLines?: number;
  /** Output bytes rendered per command; past this they are counted, and the last `outputTailBytes` kept. Default 8 MiB. */
  maxOutputBytes?: number;
  /** Bytes kept from the end of an output that passed `maxOutputBytes`. Default 64 KiB. */
  outputTailBytes?: number;
  /** Characters of rendered text kept per command: half from the start, half from the end. Default 1 000 000. */
  maxOutputChars?: number;
  /** Terminal size commands see (COLUMNS/LINES), and the renderer's scrollback. Default 120 × 30, 1000 lines. */
  terminal?: { cols?: number; rows?: number; scrollback?: number };
  /**
   * Milliseconds the headless terminal may spend emulating one command's
   * output; past it the rest is counted and only its end is shown. Bounds
   * what escape sequences that are cheap to send and costly to emulate can
   * take from the shell thread. Default 10 000.
   */
  renderBudgetMs?: number;
  /**
   * Size cap of a saved output's file (`saveOutput` of a run): past it the
   * file ends with a line saying where it was cut and how much was dropped.
   * Default 64 MiB.
   */
  savedOutputMaxBytes?: number;
  /** Host environment variables passed into commands, by name. Nothing else of the host's environment is. */
  passEnv?: string[];
  /** SIGTERM → SIGKILL delay when a command is ended. Default 200. */
  killGraceMs?: number;
  /** Options for the Docker backend (`createDockerBackend`), passed through. Must be structured-cloneable. */
  docker?: Record<string, unknown>;
}

/**
 * The shell data plane, seen from the main thread. `create` starts one
 * thread that owns every shell backend, PTY and output pipeline; the main
 * thread only sends commands and receives throttled, capped updates and
 * results, so a flood of output never reaches its event loop.
 *
 * @example
 * await using service = await ShellService.create();
 * const session = await service.openSession({ sandbox: 'auto', workspaceRoot: '/work/project' });
 * const result = await session.run({ command: 'ls -la', signal });
 */
export class ShellService {
  readonly #client: ShellThreadClient;
  readonly #sessions = new Set<ShellSessionHandle>();
  #closing: Promise<void> | undefined;

  private constructor(client: ShellThreadClient) {
    this.#client = client;
  }

  /** Starts the shell thread. Throws TypeError/RangeError naming a malformed option. */
  static async create(options: ShellServiceOptions = {}): Promise<ShellService> {
    const settings = toThreadSettings(options);
    return new ShellService(await ShellThreadClient.start(settings));
  }

  /**
   * Opens a session. `sandbox`: `docker`, `none` (the host, no isolation:
   * only when the user named it) or `auto` (default: Docker when the engine
   * answers). A session whose sandbox is unavailable still opens, but every
   * run fails with `sandbox_unavailable` until the sandbox can be reached:
   * nothing silently runs unsandboxed.
   */
  async openSession(options: { sandbox?: SandboxMode; workspaceRoot: string; sessionId?: string }): Promise<ShellSessionHandle> {
    if (typeof options !== 'object' || options === null) throw new TypeError('openSession: options must be an object');
    const sandbox = options.sandbox ?? 'auto';
    if (sandbox !== 'docker' && sandbox !== 'none' && sandbox !== 'auto') {
      throw new TypeError("openSession: sandbox must be 'docker', 'none' or 'auto'");
    }
    if (typeof options.workspaceRoot !== 'string' || !isAbsolute(options.workspaceRoot)) {
      throw new TypeError('openSession: workspaceRoot must be an absolute path');
    }
    const sessionId = options.sessionId ?? randomUUID();
    if (typeof sessionId !== 'string' || !/^[A-Za-z0-9._-]{1,128}$/.test(sessionId)) {
      throw new TypeError('openSession: sessionId must be 1-128 characters of A-Z a-z 0-9 . _ -');
    }
    if (this.#closing) throw new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, 'The shell service is closed.');
    const opened = await this.#client.request<OpenedSession>({ type: 'open', sessionId, sandbox, workspaceRoot: options.workspaceRoot });
    const handle: ShellSessionHandle = new ShellSessionHandle({
      client: this.#client,
      opened,
      sandbox,
      onClose: () => this.#sessions.delete(handle),
    });
    this.#sessions.add(handle);
    return handle;
  }

  /** Closes every session (killing what runs in them), the backends and the thread. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (!this.#client.closed) {
        await this.#client.request({ type: 'shutdown' }).catch(() => {});
      }
      this.#sessions.clear();
      await this.#client.terminate();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function toThreadSettings(options: ShellServiceOptions): ShellThreadSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('ShellService.create: options must be an object');
  const maxOutputChars = integer(options.maxOutputChars, 'maxOutputChars', 1_000_000, 2);
  const limits: OutputLimits = {
    maxBytes: integer(options.maxOutputBytes, 'maxOutputBytes', 8 * 1024 * 1024, 1),
    tailBytes: integer(options.outputTailBytes, 'outputTailBytes', 64 * 1024, 0),
    sniffBytes: DEFAULT_SNIFF_BYTES,
    headChars: Math.ceil(maxOutputChars / 2),
    tailChars: Math.floor(maxOutputChars / 2),
    liveIntervalMs: integer(options.liveUpdateIntervalMs, 'liveUpdateIntervalMs', 1000, 0),
    liveLines: integer(options.liveLines, 'liveLines', 200, 1),
    cols: integer(options.terminal?.cols, 'terminal.cols', DEFAULT_TERMINAL.cols, 20, 2000),
    rows: integer(options.terminal?.rows, 'terminal.rows', DEFAULT_TERMINAL.rows, 5, 1000),
    scrollback: integer(options.terminal?.scrollback, 'terminal.scrollback', DEFAULT_TERMINAL.scrollback, 100, 100_000),
    renderBudgetMs: integer(options.renderBudgetMs, 'renderBudgetMs', DEFAULT_RENDER_BUDGET_MS, 1),
  };
  const passEnv = options.passEnv ?? [];
  if (!Array.isArray(passEnv)) throw new TypeError('ShellService.create: passEnv must be an array of names');
  for (const name of passEnv) assertEnvName(name, 'ShellService.create: passEnv');
  const hostEnv: Record<string, string> = {};
  for (const name of [...HOST_BASE_ENV, ...passEnv]) {
    const value = process.env[name];
    if (value !== undefined) hostEnv[name] = value;
  }
  if (options.docker !== undefined && (typeof options.docker !== 'object' || options.docker === null)) {
    throw new TypeError('ShellService.create: docker must be an object');
  }
  return {
    limits,
    killGraceMs: integer(options.killGraceMs, 'killGraceMs', DEFAULT_KILL_GRACE_MS, 0),
    hostEnv,
    passEnv: [...passEnv],
    docker: options.docker ?? {},
    savedOutputMaxBytes: integer(options.savedOutputMaxBytes, 'savedOutputMaxBytes', DEFAULT_SAVED_OUTPUT_MAX_BYTES, MIN_SAVED_OUTPUT_MAX_BYTES),
  };
}

function integer(value: number | undefined, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new RangeError(`ShellService.create: ${name} must be an integer ${range}`);
  }
  return value;
}
