import type { Duplex } from 'node:stream';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { ExitStatus, SkippedOutput } from '../backend.js';
import { FrameDecoder } from './frame-decoder.js';
import {
  HEADER_SIZE,
  PROTOCOL_VERSION,
  HostFrame,
  STDIN_CHUNK,
  SupervisorFrame,
  encodeFrame,
  encodeJsonFrame,
  type ReadyInfo,
  type SpawnRequest,
} from './protocol.js';

/** What one call hears back from the supervisor. Exactly one of onExit/onSpawnFailed is called, last. */
export interface CallListener {
  onSpawned(info: { pid: number; logPath?: string }): void;
  onData(chunk: Buffer, stream: 'stdout' | 'stderr'): void;
  onSkipped(skipped: SkippedOutput, stream: 'stdout' | 'stderr'): void;
  onExit(status: ExitStatus): void;
  onSpawnFailed(message: string): void;
}

/** Docker's attach multiplexing when Tty is false: [stream u8, 0, 0, 0, length u32 BE]. */
const DOCKER_HEADER_SIZE = 8;
const DOCKER_STDOUT = 1;
const DOCKER_STDERR = 2;
/** Supervisor stderr kept for error messages (tracebacks at start-up). */
const STDERR_TAIL = 4096;

/**
 * The host end of one supervisor's framed protocol, over a container's
 * hijacked attach stream. Routes frames to calls by id; when the stream ends
 * (the container died or was removed) every open call ends too.
 */
export class SupervisorConnection {
  readonly #stream: Duplex;
  readonly #calls = new Map<number, CallListener>();
  #nextCallId = 1;
  #ended = false;
  #endReason = '';
  #stderrTail = '';
  readonly #ready: Promise<ReadyInfo>;
  #resolveReady!: (info: ReadyInfo) => void;
  #rejectReady!: (error: Error) => void;
  /** Diagnostics from the supervisor (LOG frames). */
  readonly #onLog: (entry: { level: string; message: string }) => void;

  constructor(stream: Duplex, options: { onLog?: (entry: { level: string; message: string }) => void } = {}) {
    this.#stream = stream;
    this.#onLog = options.onLog ?? (() => undefined);
    this.#ready = new Promise<ReadyInfo>((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    this.#ready.catch(() => undefined);
    const frames = new FrameDecoder({
      headerSize: HEADER_SIZE,
      payloadLength: (header) => header.readUInt32BE(5),
      onFrame: (header, payload) => this.#onFrame(header.readUInt8(0), header.readUInt32BE(1), payload),
    });
    const docker = new FrameDecoder({
      headerSize: DOCKER_HEADER_SIZE,
      payloadLength: (header) => header.readUInt32BE(4),
      onFrame: (header, payload) => {
        const kind = header.readUInt8(0);
        if (kind === DOCKER_STDOUT) frames.push(payload);
        else if (kind === DOCKER_STDERR) this.#appendStderr(payload);
      },
    });
    stream.on('data', (chunk: Buffer) => docker.push(chunk));
    stream.on('end', () => this.#end('the sandbox container exited'));
    stream.on('close', () => this.#end('the sandbox container exited'));
    stream.on('error', (error: Error) => this.#end(`the sandbox connection failed: ${error.message}`));
  }

  /** Resolves with the supervisor's hello; rejects if the stream ends first. */
  get ready(): Promise<ReadyInfo> {
    return this.#ready;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Why the stream ended (empty while it runs), with the supervisor's last stderr lines. */
  get endReason(): string {
    return this.#endReason;
  }

  /** Sends a SPAWN (and the stdin payload, if any); returns the call id. */
  startCall(request: SpawnRequest, stdin: Uint8Array | undefined, listener: CallListener): number {
    const callId = this.#nextCallId++;
    if (this.#ended) {
      queueMicrotask(() => listener.onSpawnFailed(this.#endReason));
      return callId;
    }
    this.#calls.set(callId, listener);
    this.#write(encodeJsonFrame(HostFrame.SPAWN, callId, request));
    if (request.stdin && stdin) {
      for (let offset = 0; offset < stdin.length; offset += STDIN_CHUNK) {
        this.#write(encodeFrame(HostFrame.STDIN, callId, stdin.subarray(offset, offset + STDIN_CHUNK)));
      }
      this.#write(encodeFrame(HostFrame.STDIN_EOF, callId));
    }
    return callId;
  }

  /** Asks the supervisor to end the call's whole process tree. */
  kill(callId: number, graceMs: number): void {
    if (this.#calls.has(callId)) this.#write(encodeJsonFrame(HostFrame.KILL, callId, { graceMs }));
  }

  /** Asks the supervisor to kill everything and exit, then closes our end. */
  shutdown(): void {
    if (this.#ended) return;
    this.#write(encodeFrame(HostFrame.SHUTDOWN, 0));
    this.#stream.end();
  }

  /** Tears the connection down without waiting for the supervisor. */
  destroy(): void {
    this.#stream.destroy();
    this.#end('the sandbox session was closed');
  }

  #write(frame: Buffer): void {
    if (!this.#ended && this.#stream.writable) this.#stream.write(frame);
  }

  #appendStderr(payload: Buffer): void {
    this.#stderrTail = (this.#stderrTail + payload.toString('utf8')).slice(-STDERR_TAIL);
  }

  #onFrame(type: number, callId: number, payload: Buffer): void {
    if (type === SupervisorFrame.STDOUT || type === SupervisorFrame.STDERR) {
      this.#calls.get(callId)?.onData(payload, type === SupervisorFrame.STDOUT ? 'stdout' : 'stderr');
      return;
    }
    const message = payload.length > 0 ? (JSON.parse(payload.toString('utf8')) as Record<string, unknown>) : {};
    switch (type) {
      case SupervisorFrame.READY:
        if (message['version'] !== PROTOCOL_VERSION) {
          // An image built by another toolcell: its frames could mean other things.
          this.#rejectReady(
            new ToolcellError(
              ToolErrorType.SANDBOX_UNAVAILABLE,
              `The sandbox image's supervisor speaks protocol version ${JSON.stringify(message['version'] ?? null)}, this toolcell speaks version ${PROTOCOL_VERSION}: rebuild the image with \`toolcell sandbox build\`.`,
            ),
          );
          return;
        }
        this.#resolveReady(message as unknown as ReadyInfo);
        return;
      case SupervisorFrame.SPAWNED: {
        const info: { pid: number; logPath?: string } = { pid: Number(message['pid']) };
        if (typeof message['logPath'] === 'string') info.logPath = message['logPath'];
        this.#calls.get(callId)?.onSpawned(info);
        return;
      }
      case SupervisorFrame.EXIT: {
        const listener = this.#calls.get(callId);
        this.#calls.delete(callId);
        listener?.onExit({
          exitCode: typeof message['exitCode'] === 'number' ? message['exitCode'] : null,
          signal: typeof message['signal'] === 'string' ? message['signal'] : null,
        });
        return;
      }
      case SupervisorFrame.SPAWN_FAILED: {
        const listener = this.#calls.get(callId);
        this.#calls.delete(callId);
        listener?.onSpawnFailed(String(message['message'] ?? 'spawn failed'));
        return;
      }
      case SupervisorFrame.SKIPPED:
        this.#calls.get(callId)?.onSkipped(toSkippedOutput(message), message['stream'] === 'stderr' ? 'stderr' : 'stdout');
        return;
      case SupervisorFrame.LOG:
        this.#onLog({ level: String(message['level']), message: String(message['message']) });
        return;
      case SupervisorFrame.REFUSED:
        this.#rejectReady(
          new ToolcellError(
            ToolErrorType.SANDBOX_UNAVAILABLE,
            `Refusing to start the sandbox: ${String(message['message'] ?? 'the supervisor refused to start')}.`,
          ),
        );
        return;
      default:
        return;
    }
  }

  #end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    const detail = this.#stderrTail.trim();
    this.#endReason = detail ? `${reason}: ${detail.split('\n').slice(-3).join(' | ')}` : reason;
    this.#rejectReady(new Error(this.#endReason));
    const calls = [...this.#calls.values()];
    this.#calls.clear();
    // Processes of a removed container are gone: each open call ends as killed.
    for (const call of calls) call.onExit({ exitCode: null, signal: 'SIGKILL' });
  }
}

/** A SKIPPED frame's counts; anything not a count is taken as 0. */
function toSkippedOutput(message: Record<string, unknown>): SkippedOutput {
  const count = (value: unknown): number => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0);
  return { bytes: count(message['bytes']), lineFeeds: count(message['lineFeeds']), endsWithLineFeed: message['endsWithLineFeed'] === true };
}
