import { ToolErrorType, ToolcellError } from '../errors.js';
import { parseOptions } from '../contracts/parse-options.js';
import type { OpenedSession, RunRequest } from './protocol.js';
import { shellRunOptionsSchema, type ShellRunOptions } from './run-options.js';
import type { SandboxMode, ShellRunResult } from './run-types.js';
import { fromWire, type ShellThreadClient } from './thread-client.js';

/**
 * One sandbox session on the main thread: runs commands in it and closes
 * it. Files in /tmp and processes are never shared between sessions; a
 * session's background jobs end when it closes. Made by
 * `ShellService.openSession`.
 */
export class ShellSessionHandle {
  readonly id: string;
  readonly sandbox: SandboxMode;
  readonly #client: ShellThreadClient;
  readonly #onClose: () => void;
  #opened: OpenedSession;
  #closing: Promise<void> | undefined;

  /** @internal Use `ShellService.openSession`. */
  constructor(options: { client: ShellThreadClient; opened: OpenedSession; sandbox: SandboxMode; onClose: () => void }) {
    this.#client = options.client;
    this.#opened = options.opened;
    this.id = options.opened.sessionId;
    this.sandbox = options.sandbox;
    this.#onClose = options.onClose;
  }

  /** Where commands run, e.g. `docker (toolcell-sandbox:3f2a…, runtime runsc)`, `host (no sandbox)`, or `unavailable: …`. */
  describe(): string {
    return this.#opened.description;
  }

  /** The kind of backend behind the session, or `unavailable` (every run then fails with `sandbox_unavailable`). */
  get backend(): OpenedSession['backend'] {
    return this.#opened.backend;
  }

  /** The OCI runtime of the session's container (`runc`, `runsc`); undefined off Docker. */
  get runtime(): string | undefined {
    return this.#opened.runtime;
  }

  /**
   * Runs one command. Resolves with its result also when it failed, was
   * cancelled or timed out (see `exitCode`, `aborted`, `timedOut`); rejects
   * with a ToolcellError when it could not run at all (`sandbox_unavailable`,
   * `path_not_in_workspace`, `shell_execute_error`…). Throws TypeError for
   * malformed options.
   */
  async run(options: ShellRunOptions): Promise<ShellRunResult> {
    const request = toRunRequest(options);
    if (this.#closing) throw new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `Shell session ${this.id} is closed.`);
    const { signal, onOutput } = options;
    if (signal?.aborted) throw new ToolcellError(ToolErrorType.CANCELLED, 'The command was cancelled before it started.');
    const { done, cancel } = this.#client.run(this.id, request, (event) => {
      if (event.type === 'output') onOutput?.(event.output);
    });
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const event = await done;
      if (event.type === 'error') throw fromWire(event.error);
      if (event.type !== 'result') throw new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, 'The shell thread sent no result.');
      return event.result;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }

  /** Ends everything still running in the session (background jobs included) and frees it. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#onClose();
      if (this.#client.closed) return;
      await this.#client.request({ type: 'close-session', sessionId: this.id });
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function toRunRequest(raw: ShellRunOptions): RunRequest {
  const options = parseOptions(shellRunOptionsSchema, raw, 'run');
  const { stdin, timeouts, saveOutput } = options;
  return {
    command: options.command,
    cwd: options.cwd,
    env: options.env,
    mode: options.mode,
    ...(stdin !== undefined ? { stdin: typeof stdin === 'string' ? new TextEncoder().encode(stdin) : stdin } : {}),
    background: options.background,
    inactivityMs: timeouts.inactivityMs,
    ...(timeouts.wallMs !== undefined ? { wallMs: timeouts.wallMs } : {}),
    live: options.onOutput !== undefined,
    ...(saveOutput ? { saveOutput } : {}),
  };
}
