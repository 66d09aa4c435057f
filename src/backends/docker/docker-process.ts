import type { ExitStatus, SkippedOutput, SpawnedProcess } from '../backend.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { SpawnRequest } from './protocol.js';
import type { SupervisorConnection } from './supervisor-connection.js';
import { DEFAULT_KILL_GRACE_MS } from '../../contracts/defaults.js';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';

const killOptionsSchema = z.strictObject({ graceMs: z.number().int().min(0).default(DEFAULT_KILL_GRACE_MS) });

type Stream = 'stdout' | 'stderr';
type DataListener = (chunk: Uint8Array, stream: Stream) => void;
type SkippedListener = (skipped: SkippedOutput, stream: Stream) => void;
/** Output in arrival order: a chunk, or a report of bytes dropped past the call's budget. */
export type OutputEvent = [Buffer | SkippedOutput, Stream];

/**
 * A command running under the supervisor of a session's container. Output
 * that arrives before the first `onData` listener is kept and handed to it
 * (skip reports to the `onSkipped` listeners subscribed by then), so nothing
 * is lost between `spawn()` resolving and the caller subscribing.
 */
export class DockerProcess implements SpawnedProcess {
  readonly pid: number;
  readonly logPath?: string;
  readonly exited: Promise<ExitStatus>;
  readonly #connection: SupervisorConnection;
  readonly #callId: number;
  readonly #listeners: DataListener[] = [];
  readonly #skippedListeners: SkippedListener[] = [];
  #early: OutputEvent[] | null;
  #settle!: (status: ExitStatus) => void;
  #status: ExitStatus | undefined;

  constructor(input: { connection: SupervisorConnection; callId: number; pid: number; logPath?: string; early: OutputEvent[] }) {
    this.#connection = input.connection;
    this.#callId = input.callId;
    this.pid = input.pid;
    if (input.logPath !== undefined) this.logPath = input.logPath;
    this.#early = input.early;
    this.exited = new Promise<ExitStatus>((resolve) => {
      this.#settle = resolve;
    });
  }

  onData(listener: DataListener): void {
    if (typeof listener !== 'function') throw new TypeError('onData: listener must be a function');
    this.#listeners.push(listener);
    const early = this.#early;
    if (early !== null) {
      this.#early = null;
      for (const event of early) this.#dispatch(event);
    }
  }

  onSkipped(listener: SkippedListener): void {
    if (typeof listener !== 'function') throw new TypeError('onSkipped: listener must be a function');
    this.#skippedListeners.push(listener);
  }

  /** Called by the session's routing: one output chunk, or a report of dropped output. */
  deliver(event: OutputEvent): void {
    if (this.#early !== null) this.#early.push(event);
    else this.#dispatch(event);
  }

  #dispatch([output, stream]: OutputEvent): void {
    if (Buffer.isBuffer(output)) for (const listener of this.#listeners) listener(output, stream);
    else for (const listener of this.#skippedListeners) listener(output, stream);
  }

  /** Called by the session's routing: the call's last frame (all output came before it). */
  finish(status: ExitStatus): void {
    if (this.#status !== undefined) return;
    this.#status = status;
    this.#settle(status);
  }

  async kill(options: { graceMs?: number } = {}): Promise<void> {
    const { graceMs } = parseOptions(killOptionsSchema, options, 'kill');
    if (this.#status === undefined) this.#connection.kill(this.#callId, graceMs);
    await this.exited;
  }
}

/**
 * Sends a SPAWN and resolves with the process once the supervisor reports it
 * started (after a successful exec). Rejects with `shell_execute_error` when it
 * could not start (bad cwd, exec failure, container gone).
 */
export function startDockerProcess(
  connection: SupervisorConnection,
  request: SpawnRequest,
  stdin: Uint8Array | undefined,
  hostLogPath: string | undefined,
): Promise<DockerProcess> {
  return new Promise((resolve, reject) => {
    let started: DockerProcess | undefined;
    const early: OutputEvent[] = [];
    const callId = connection.startCall(request, stdin, {
      onSpawned(info) {
        started = new DockerProcess({
          connection,
          callId,
          pid: info.pid,
          early,
          ...(hostLogPath !== undefined ? { logPath: hostLogPath } : {}),
        });
        resolve(started);
      },
      onData(chunk, stream) {
        if (started) started.deliver([chunk, stream]);
        else early.push([chunk, stream]);
      },
      onSkipped(skipped, stream) {
        if (started) started.deliver([skipped, stream]);
        else early.push([skipped, stream]);
      },
      onExit(status) {
        if (started) started.finish(status);
        else
          reject(
            new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `The command could not start: ${connection.endReason || 'the sandbox container ended'}.`),
          );
      },
      onSpawnFailed(message) {
        reject(new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `Cannot start the command in the sandbox: ${message}`));
      },
    });
  });
}
