import type { ShellRunOptions, ShellRunResult } from '../shell/run-types.js';
import { ShellService, type ShellServiceOptions } from '../shell/shell-service.js';
import type { ShellSessionHandle } from '../shell/session-handle.js';
import type { SandboxMode } from './runtime.js';

/**
 * A shell session that starts the shell thread and opens its sandbox (probe
 * the engine, take a warm container) on the first command, not when the
 * runtime is built: `toolcell tools`, or a batch of file reads, never pays
 * for a container it does not use.
 */
export class LazyShellSession {
  readonly #sandbox: SandboxMode;
  readonly #workspaceRoot: string;
  readonly #serviceOptions: ShellServiceOptions;
  #opening: Promise<{ service: ShellService; session: ShellSessionHandle }> | undefined;
  #opened: ShellSessionHandle | undefined;
  #closed = false;

  constructor(options: { sandbox: SandboxMode; workspaceRoot: string; service?: ShellServiceOptions }) {
    this.#sandbox = options.sandbox;
    this.#workspaceRoot = options.workspaceRoot;
    this.#serviceOptions = options.service ?? {};
  }

  /** Where commands run; before the first command, where they are meant to run. */
  describe(): string {
    if (this.#opened) return this.#opened.describe();
    if (this.#sandbox === 'none') return 'host (no sandbox)';
    return this.#sandbox === 'docker' ? 'docker sandbox' : 'docker sandbox (refused if the Docker engine does not answer)';
  }

  async run(options: ShellRunOptions): Promise<ShellRunResult> {
    const { session } = await this.#open();
    return session.run(options);
  }

  #open(): Promise<{ service: ShellService; session: ShellSessionHandle }> {
    if (this.#closed) return Promise.reject(new Error('The shell session is closed.'));
    this.#opening ??= (async () => {
      const service = await ShellService.create(this.#serviceOptions);
      try {
        const session = await service.openSession({ sandbox: this.#sandbox, workspaceRoot: this.#workspaceRoot });
        this.#opened = session;
        return { service, session };
      } catch (error) {
        await service.close();
        throw error;
      }
    })();
    return this.#opening;
  }

  /** Closes the session (killing background jobs) and the shell thread, if they were ever started. */
  async close(): Promise<void> {
    this.#closed = true;
    const opening = this.#opening;
    if (!opening) return;
    const { service, session } = await opening.catch(() => ({ service: undefined, session: undefined }));
    await session?.close().catch(() => {});
    await service?.close();
  }
}
