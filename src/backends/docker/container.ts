import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { ToolcellError, ToolErrorType, isToolcellError } from '../../errors.js';
import { untilAborted } from '../../until-aborted.js';
import { removeContainer } from './cleanup.js';
import { sandboxDebug } from './diagnostics.js';
import { engineCall, type EngineOptions } from './engine.js';
import { missingImageMessage } from './ensure-image.js';
import type { ReadyInfo } from './protocol.js';
import { SupervisorConnection } from './supervisor-connection.js';

/** What starting a container needs. */
export interface StartContainerInput {
  docker: Docker;
  engine: EngineOptions;
  spec: Docker.ContainerCreateOptions;
  /** The container's name (`toolcell-…`, so `docker ps` shows whose it is). */
  name: string;
  timeoutMs: number;
  /** Runs once the container has been removed (by remove()). */
  onRemoved?: () => Promise<void>;
  /**
   * Cancels the start: no engine call is cut off half-way (the engine would
   * finish it unseen), but none follows, the wait for the supervisor ends,
   * and a container already created is removed before `start` rejects with
   * `cancelled`.
   */
  signal?: AbortSignal;
}

function cancelledError(): ToolcellError {
  return new ToolcellError(ToolErrorType.CANCELLED, 'The sandbox container start was cancelled.');
}

function startError(error: unknown, image: string | undefined): ToolcellError {
  if (isToolcellError(error)) return error as ToolcellError;
  const status = (error as { statusCode?: number }).statusCode;
  const message = (error as Error).message ?? String(error);
  if (status === 404 && /image/i.test(message) && image) {
    return new ToolcellError(ToolErrorType.SANDBOX_IMAGE_MISSING, missingImageMessage(image), { cause: error });
  }
  // gVisor's own network stack does not start on some kernels (runtimes.ts): its registration lacks the network mode they need.
  const hint = /network enabled in root network namespace/.test(message)
    ? ' (gVisor is registered without the network mode this kernel needs: run `toolcell sandbox setup --runtime runsc`)'
    : /Requested CPUs are not available/.test(message)
      ? " (the sandboxes' CPU set, `serve --sandbox-cpus` or the backend's cpuSet, names CPUs the engine's machine does not offer)"
      : '';
  return new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `Cannot start a sandbox container: ${message.trim()}${hint}`, { cause: error });
}

/**
 * One running sandbox container and its supervisor connection. Created,
 * attached (before start, so no output is lost) and started; usable once the
 * supervisor has said READY.
 */
export class SandboxContainer {
  readonly id: string;
  readonly connection: SupervisorConnection;
  readonly ready: ReadyInfo;
  readonly #docker: Docker;
  readonly #onRemoved: (() => Promise<void>) | undefined;
  #removal: Promise<void> | undefined;

  private constructor(docker: Docker, id: string, connection: SupervisorConnection, ready: ReadyInfo, onRemoved?: () => Promise<void>) {
    this.#docker = docker;
    this.#onRemoved = onRemoved;
    this.id = id;
    this.connection = connection;
    this.ready = ready;
  }

  /** Creates, attaches and starts a container; resolves when its supervisor is ready. */
  static async start(input: StartContainerInput): Promise<SandboxContainer> {
    const { docker, engine, spec, timeoutMs, signal } = input;
    if (signal?.aborted) throw cancelledError();
    let container: Docker.Container;
    try {
      container = await engineCall(engine, () => docker.createContainer({ ...spec, name: input.name }));
    } catch (error) {
      throw startError(error, spec.Image);
    }
    let connection: SupervisorConnection | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      if (signal?.aborted) throw cancelledError();
      const stream = (await engineCall(engine, () =>
        container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true }),
      )) as unknown as Duplex;
      const shortId = container.id.slice(0, 12);
      connection = new SupervisorConnection(stream, { onLog: (entry) => sandboxDebug(`${shortId}: ${entry.level}: ${entry.message}`) });
      if (signal?.aborted) throw cancelledError();
      await engineCall(engine, () => container.start());
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the supervisor did not answer within ${timeoutMs} ms`)), timeoutMs);
      });
      const ready = await untilAborted(Promise.race([connection.ready, timeout]), signal);
      if (ready === undefined) throw cancelledError();
      return new SandboxContainer(docker, container.id, connection, ready, input.onRemoved);
    } catch (error) {
      connection?.destroy();
      await removeContainer(docker, container.id).catch(() => undefined);
      throw signal?.aborted ? cancelledError() : startError(error, spec.Image);
    } finally {
      clearTimeout(timer);
    }
  }

  /** False once the container has exited or the connection broke. */
  get alive(): boolean {
    return !this.connection.ended;
  }

  /** Short id, for messages. */
  get shortId(): string {
    return this.id.slice(0, 12);
  }

  /** Renames the container (best effort; used to show which session adopted a spare). */
  async rename(name: string): Promise<void> {
    try {
      await this.#docker.getContainer(this.id).rename({ name });
    } catch {
      // A name clash or a removed container: the labels still identify it.
    }
  }

  /** Kills everything in the container and removes it. Idempotent. */
  remove(): Promise<void> {
    this.#removal ??= (async () => {
      this.connection.shutdown();
      try {
        await removeContainer(this.#docker, this.id);
      } finally {
        this.connection.destroy();
        await this.#onRemoved?.().catch(() => undefined);
      }
    })();
    return this.#removal;
  }
}
