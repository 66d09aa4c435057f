import { ToolErrorType, ToolcellError } from '../errors.js';
import type { ShellRunOptions, ShellRunResult } from '../shell/run-types.js';
import { ShellService, type ShellServiceOptions } from '../shell/shell-service.js';
import type { ShellSessionHandle } from '../shell/session-handle.js';
import { untilAborted } from '../until-aborted.js';
import type { SandboxMode } from '../contracts/sandbox-mode.js';

/**
 * A shell session that starts the shell thread and opens its sandbox (probe
 * the engine, take a warm container) on the first command, not when the
 * runtime is built: `toolcell tools`, or a batch of file reads, never pays
 * for a container it does not use.
 *
 * Opening a Docker sandbox takes a while (engine probe, container start:
 * 0.5-1 s here). A command cancelled meanwhile returns at once, and the
 * opening goes on for the next command; `close` cancels an opening still
 * under way, and the shell thread removes the half-started container before
 * it ends, so nothing is left running.
 */
export class LazyShellSession {
  readonly #sandbox: SandboxMode;
  readonly #workspaceRoot: string;
  readonly #serviceOptions: ShellServiceOptions;
  readonly #secrets: Record<string, string> | undefined;
  #service: Promise<ShellService> | undefined;
  #opening: Promise<ShellSessionHandle> | undefined;
  #opened: ShellSessionHandle | undefined;
  #closed = false;

  constructor(options: { sandbox: SandboxMode; workspaceRoot: string; service?: ShellServiceOptions; secrets?: Record<string, string> }) {
    this.#sandbox = options.sandbox;
    this.#secrets = options.secrets;
    this.#workspaceRoot = options.workspaceRoot;
    this.#serviceOptions = options.service ?? {};
  }

  /** Where commands run; before the first command, where they are meant to run. */
  describe(): string {
    if (this.#opened) return this.#opened.describe();
    if (this.#sandbox === 'none') return 'host (no sandbox)';
    return this.#sandbox === 'docker' ? 'docker sandbox' : 'docker sandbox (refused if the Docker engine does not answer)';
  }

  /** The opened session's backend (`docker`, `host`, `unavailable`); undefined before the first command. */
  get backend(): ShellSessionHandle['backend'] | undefined {
    return this.#opened?.backend;
  }

  /** The opened session's OCI runtime (`runc`, `runsc`); undefined before the first command and off Docker. */
  get runtime(): string | undefined {
    return this.#opened?.runtime;
  }

  async run(options: ShellRunOptions): Promise<ShellRunResult> {
    const session = await untilAborted(this.#open(), options.signal);
    if (session === undefined) throw new ToolcellError(ToolErrorType.CANCELLED, 'The command was cancelled before it started.');
    return session.run(options);
  }

  #open(): Promise<ShellSessionHandle> {
    if (this.#closed) return Promise.reject(new Error('The shell session is closed.'));
    this.#opening ??= (async () => {
      this.#service = ShellService.create(this.#serviceOptions);
      const service = await this.#service;
      try {
        const session = await service.openSession({
          sandbox: this.#sandbox,
          workspaceRoot: this.#workspaceRoot,
          ...(this.#secrets ? { secrets: this.#secrets } : {}),
        });
        this.#opened = session;
        return session;
      } catch (error) {
        await service.close();
        throw error;
      }
    })();
    // A failed opening is reported by the command that waits for it; nobody else needs to see it.
    this.#opening.catch(() => undefined);
    return this.#opening;
  }

  /**
   * Closes the session (killing background jobs) and the shell thread, if
   * they were ever started; an opening still under way is cancelled.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const service = await this.#service?.catch(() => undefined);
    // The service's shutdown cancels a sandbox start still under way, waits until its container is
    // removed, and closes every session; there is no need to wait for the opening first.
    await service?.close();
    await this.#opening?.catch(() => undefined);
  }
}
