import { randomUUID } from 'node:crypto';
import { ToolErrorType, ToolcellError } from '../errors.js';
import { DEFAULT_SNIFF_BYTES } from './output/binary-sniffer.js';
import { openSessionOptionsSchema, shellServiceOptionsSchema, type OpenSessionOptions, type ShellServiceOptions } from './shell-service-options.js';
import type { OutputLimits } from './output/output-pipeline.js';
import { assertEnvName } from './environment.js';
import type { OpenedSession, ShellThreadSettings } from './protocol.js';
import { ShellSessionHandle } from './session-handle.js';
import { ShellThreadClient } from './thread-client.js';
import { parseOptions } from '../contracts/parse-options.js';

/** Host variables the allowlist itself draws on (used for host sessions only). */
const HOST_BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL'] as const;

export { DEFAULT_SAVED_OUTPUT_MAX_BYTES, MIN_SAVED_OUTPUT_MAX_BYTES, type ShellServiceOptions } from './shell-service-options.js';

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
   * nothing silently runs unsandboxed. `limits` (memory, cpus, pids, …)
   * give this session's container its own limits over the backend's.
   * `awaitSandbox: false` resolves before the container is up (see its doc).
   */
  async openSession(raw: OpenSessionOptions): Promise<ShellSessionHandle> {
    const { sandbox, workspaceRoot, sessionId = randomUUID(), limits, awaitSandbox, secrets } = parseOptions(openSessionOptionsSchema, raw, 'openSession');
    if (this.#closing) throw new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, 'The shell service is closed.');
    const opened = await this.#client.request<OpenedSession>({
      type: 'open',
      sessionId,
      sandbox,
      workspaceRoot,
      ...(limits ? { limits } : {}),
      ...(secrets && Object.keys(secrets).length > 0 ? { secrets } : {}),
      awaitSandbox,
    });
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

function toThreadSettings(raw: ShellServiceOptions): ShellThreadSettings {
  const options = parseOptions(shellServiceOptionsSchema, raw, 'ShellService.create');
  const limits: OutputLimits = {
    maxBytes: options.maxOutputBytes,
    tailBytes: options.outputTailBytes,
    sniffBytes: DEFAULT_SNIFF_BYTES,
    headChars: Math.ceil(options.maxOutputChars / 2),
    tailChars: Math.floor(options.maxOutputChars / 2),
    liveIntervalMs: options.liveUpdateIntervalMs,
    liveLines: options.liveLines,
    cols: options.terminal.cols,
    rows: options.terminal.rows,
    scrollback: options.terminal.scrollback,
    renderBudgetMs: options.renderBudgetMs,
  };
  for (const name of options.passEnv) assertEnvName(name, 'ShellService.create: passEnv');
  const hostEnv: Record<string, string> = {};
  for (const name of [...HOST_BASE_ENV, ...options.passEnv]) {
    const value = process.env[name];
    if (value !== undefined) hostEnv[name] = value;
  }
  return {
    limits,
    killGraceMs: options.killGraceMs,
    hostEnv,
    passEnv: [...options.passEnv],
    docker: options.docker,
    savedOutputMaxBytes: options.savedOutputMaxBytes,
    drainBytesPerSecond: options.drainBytesPerSecond,
  };
}
