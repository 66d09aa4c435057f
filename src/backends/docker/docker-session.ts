import { join } from 'node:path';
import type { ShellSession, SpawnOptions, SpawnedProcess } from '../backend.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import type { SandboxContainer } from './container.js';
import { startDockerProcess } from './docker-process.js';
import { toSpawnRequest } from './spawn-request.js';

/** A session's container together with the host folder its background logs land in. */
export interface SessionContainer {
  container: SandboxContainer;
  backgroundDir: string;
  /** Its address on the egress network, when the backend has one. */
  address?: string;
}

/** What a session needs of the backend's egress network. */
export interface SessionEgress {
  readonly env: Record<string, string>;
  refusalNotes(address: string, since: number): string[];
  forget(address: string): void;
}

/** A file-name-safe form of a session id. */
export function sessionSlug(sessionId: string): string {
  return sessionId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 48) || 'session';
}

/**
 * One tenant's sandbox: a container of its own, so its /tmp and processes are
 * invisible to other sessions. If the container dies (say the supervisor was
 * killed), the next spawn gets a fresh one (its /tmp starts empty).
 */
export class DockerSession implements ShellSession {
  readonly id: string;
  #current: SessionContainer;
  readonly #replace: () => Promise<SessionContainer>;
  readonly #onClose: () => void;
  readonly #egress: SessionEgress | undefined;
  #replacing: Promise<SessionContainer> | undefined;
  #closed: Promise<void> | undefined;
  #backgroundCount = 0;

  constructor(input: { id: string; container: SessionContainer; replace: () => Promise<SessionContainer>; onClose: () => void; egress?: SessionEgress }) {
    this.id = input.id;
    this.#egress = input.egress;
    this.#current = input.container;
    this.#replace = input.replace;
    this.#onClose = input.onClose;
  }

  /** The container's id (12 characters), for logs and tests. */
  get containerId(): string {
    return this.#current.container.shortId;
  }

  async spawn(options: SpawnOptions): Promise<SpawnedProcess> {
    if (this.#closed) throw new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `Sandbox session ${this.id} is closed.`);
    const logName = options?.background === true ? `${sessionSlug(this.id)}-${Date.now()}-${++this.#backgroundCount}.log` : undefined;
    const egress = this.#egress;
    const request = toSpawnRequest(egress ? { ...options, env: { ...options.env, ...egress.env } } : options, logName);
    const current = await this.#live();
    const hostLogPath = logName !== undefined ? join(current.backgroundDir, logName) : undefined;
    const started = Date.now();
    const spawned = await startDockerProcess(current.container.connection, request, options.stdin, hostLogPath);
    const address = current.address;
    if (!egress || address === undefined) return spawned;
    // The proxy's refusals from this container while the command ran: the model learns why its client failed.
    const exited = spawned.exited.then((status) => {
      const notes = egress.refusalNotes(address, started);
      return notes.length > 0 ? { ...status, notes } : status;
    });
    return {
      pid: spawned.pid,
      ...(spawned.logPath !== undefined ? { logPath: spawned.logPath } : {}),
      onData: (listener) => spawned.onData(listener),
      onSkipped: (listener) => spawned.onSkipped(listener),
      exited,
      kill: (killOptions) => spawned.kill(killOptions),
    };
  }

  async #live(): Promise<SessionContainer> {
    if (this.#current.container.alive) return this.#current;
    this.#replacing ??= (async () => {
      void this.#current.container.remove().catch(() => undefined);
      try {
        this.#current = await this.#replace();
        return this.#current;
      } finally {
        this.#replacing = undefined;
      }
    })();
    const replacement = await this.#replacing;
    if (this.#closed) {
      await replacement.container.remove();
      throw new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `Sandbox session ${this.id} is closed.`);
    }
    return replacement;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      try {
        await this.#current.container.remove();
      } finally {
        if (this.#current.address !== undefined) this.#egress?.forget(this.#current.address);
        this.#onClose();
      }
    })();
    return this.#closed;
  }
}
