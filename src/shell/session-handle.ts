import { isAbsolute } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';
import { assertEnvName } from './environment.js';
import type { OpenedSession, RunRequest } from './protocol.js';
import { DEFAULT_INACTIVITY_TIMEOUT_MS, type SandboxMode, type ShellRunOptions, type ShellRunResult } from './run-types.js';
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

  /** Where commands run, e.g. `docker (toolcell-sandbox:3f2a…)`, `host (no sandbox)`, or `unavailable: …`. */
  describe(): string {
    return this.#opened.description;
  }

  /** The kind of backend behind the session, or `unavailable` (every run then fails with `sandbox_unavailable`). */
  get backend(): OpenedSession['backend'] {
    return this.#opened.backend;
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

function toRunRequest(options: ShellRunOptions): RunRequest {
  if (typeof options !== 'object' || options === null) throw new TypeError('run: options must be an object');
  const { command } = options;
  if (typeof command !== 'string' || command.trim().length === 0) throw new TypeError('run: command must be a non-empty string');
  if (command.includes('\0')) throw new TypeError('run: command must not contain NUL characters');
  const cwd = options.cwd ?? '';
  if (typeof cwd !== 'string' || cwd.includes('\0')) throw new TypeError('run: cwd must be a string without NUL characters');
  const mode = options.mode ?? 'pty';
  if (mode !== 'pty' && mode !== 'pipes') throw new TypeError("run: mode must be 'pty' or 'pipes'");
  let stdin: Uint8Array | undefined;
  if (options.stdin !== undefined) {
    if (mode !== 'pipes') throw new TypeError("run: stdin needs mode 'pipes' (a PTY's stdin always reads end-of-file)");
    if (typeof options.stdin === 'string') stdin = new TextEncoder().encode(options.stdin);
    else if (options.stdin instanceof Uint8Array) stdin = options.stdin;
    else throw new TypeError('run: stdin must be a string or a Uint8Array');
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env ?? {})) {
    assertEnvName(name, 'run: env');
    if (typeof value !== 'string' || value.includes('\0')) throw new TypeError(`run: env.${name} must be a string without NUL characters`);
    env[name] = value;
  }
  const inactivityMs = options.timeouts?.inactivityMs ?? DEFAULT_INACTIVITY_TIMEOUT_MS;
  if (!Number.isFinite(inactivityMs) || inactivityMs < 0) throw new RangeError('run: timeouts.inactivityMs must be a number >= 0');
  const wallMs = options.timeouts?.wallMs;
  if (wallMs !== undefined && (!Number.isFinite(wallMs) || wallMs <= 0)) throw new RangeError('run: timeouts.wallMs must be a number > 0');
  if (options.onOutput !== undefined && typeof options.onOutput !== 'function') throw new TypeError('run: onOutput must be a function');
  const saveOutput = checkSaveOutput(options.saveOutput);
  return {
    command,
    cwd,
    env,
    mode,
    ...(stdin ? { stdin } : {}),
    background: options.background === true,
    inactivityMs,
    ...(wallMs !== undefined ? { wallMs } : {}),
    live: typeof options.onOutput === 'function',
    ...(saveOutput ? { saveOutput } : {}),
  };
}

function checkSaveOutput(value: ShellRunOptions['saveOutput']): RunRequest['saveOutput'] {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) throw new TypeError('run: saveOutput must be an object');
  const { path, afterChars } = value;
  if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0')) throw new TypeError('run: saveOutput.path must be an absolute path');
  if (!Number.isInteger(afterChars) || afterChars < 1) throw new RangeError('run: saveOutput.afterChars must be an integer >= 1');
  return { path, afterChars };
}
