import type { MessagePort } from 'node:worker_threads';
import { ToolErrorType, ToolcellError } from '../../errors.js';
import type { ShellBackend, ShellSession } from '../../backends/backend.js';
import { buildShellEnvironment } from '../environment.js';
import type { OpenedSession, RunRequest, ShellThreadSettings, ThreadReply, ThreadRequest } from '../protocol.js';
import type { SandboxMode } from '../run-types.js';
import type { SessionLimits } from '../../backends/session-limits.js';
import { runCommand, toWireError } from './run-command.js';
import { SandboxResolver } from './sandbox-resolver.js';
import { SecretRedactor } from '../../secrets/secret-redactor.js';

/** A session as the thread holds it: open on a backend, or failed closed (retried on each run). */
interface ThreadSession {
  id: string;
  sandbox: SandboxMode;
  workspaceRoot: string;
  /** The session's own container limits; kept for a retried opening. */
  limits?: SessionLimits;
  backend?: ShellBackend;
  shell?: ShellSession;
  /** Why commands cannot run (no sandbox); cleared once a retry succeeds. */
  unavailable?: ToolcellError;
  opening?: Promise<void>;
  /** Aborted when the session closes: an opening still under way stops, and removes what it started. */
  closing: AbortController;
  /** Environment values of every command, redacted from their output. */
  secrets?: Record<string, string>;
  redactor?: SecretRedactor;
}

/**
 * The shell data plane: owns every backend (so every PTY lives in this one
 * thread), the sessions, and each run's output pipeline. Answers control
 * requests on `control` and each run on its own port.
 */
export function startShellThread(control: MessagePort, settings: ShellThreadSettings): void {
  const thread = new ShellThread(control, settings);
  control.on('message', (message: ThreadRequest) => thread.receive(message));
}

class ShellThread {
  readonly #control: MessagePort;
  readonly #settings: ShellThreadSettings;
  readonly #resolver: SandboxResolver;
  readonly #sessions = new Map<string, ThreadSession>();

  constructor(control: MessagePort, settings: ShellThreadSettings) {
    this.#control = control;
    this.#settings = settings;
    this.#resolver = new SandboxResolver({ docker: settings.docker });
  }

  /** Handles one control request; each answers on `control` (runs on their own port). */
  receive(message: ThreadRequest): void {
    switch (message.type) {
      case 'open':
        this.#open(message);
        return;
      case 'run':
        void this.#run(message.sessionId, message.port, message.run).catch((error: unknown) => {
          message.port.postMessage({ type: 'error', error: toWireError(error) });
        });
        return;
      case 'close-session': {
        const session = this.#sessions.get(message.sessionId);
        this.#sessions.delete(message.sessionId);
        this.#answer(message.id, session ? ShellThread.#close(session) : Promise.resolve());
        return;
      }
      case 'shutdown': {
        // A sandbox still starting is cancelled, and its container removed, before the thread ends.
        const closing = [...this.#sessions.values()].map((session) => ShellThread.#close(session));
        this.#sessions.clear();
        void Promise.allSettled(closing)
          .then(() => this.#resolver.close())
          .then(() => this.#reply({ type: 'reply', id: message.id, ok: true }));
        return;
      }
    }
  }

  #reply(message: ThreadReply): void {
    this.#control.postMessage(message);
  }

  /** Replies ok when `work` succeeds, with its error otherwise. */
  #answer(id: number, work: Promise<void>): void {
    work.then(
      () => this.#reply({ type: 'reply', id, ok: true }),
      (error: unknown) => this.#reply({ type: 'reply', id, ok: false, error: toWireError(error) }),
    );
  }

  #open(message: Extract<ThreadRequest, { type: 'open' }>): void {
    const { id, sessionId, sandbox, workspaceRoot, limits, secrets } = message;
    if (this.#sessions.has(sessionId)) {
      this.#reply({ type: 'reply', id, ok: false, error: { code: ToolErrorType.INVALID_SESSION, message: `Shell session ${sessionId} is already open` } });
      return;
    }
    const redactor = SecretRedactor.of(secrets);
    const session: ThreadSession = {
      id: sessionId,
      sandbox,
      workspaceRoot,
      ...(limits ? { limits } : {}),
      ...(secrets && redactor ? { secrets, redactor } : {}),
      closing: new AbortController(),
    };
    this.#sessions.set(session.id, session);
    let answered = false;
    const answer = (opened: OpenedSession): void => {
      if (answered) return;
      answered = true;
      this.#reply({ type: 'reply', id, ok: true, value: opened });
    };
    // Not awaiting the sandbox: answer once the backend is known; the first run waits for the opening.
    const onResolved = message.awaitSandbox ? undefined : (backend: ShellBackend) => answer(opened(sessionId, backend, limits));
    void this.#connect(session, onResolved).then(() => answer(describe(session)));
  }

  /** Opens (or re-tries opening) the session's sandbox; `onResolved` learns its backend before the sandbox starts. */
  #connect(session: ThreadSession, onResolved?: (backend: ShellBackend) => void): Promise<void> {
    session.opening ??= (async () => {
      const resolved = await this.#resolver.resolve(session.sandbox);
      if (!resolved.ok) {
        session.unavailable = resolved.error;
        return;
      }
      onResolved?.(resolved.backend);
      const signal = session.closing.signal;
      if (signal.aborted) {
        session.unavailable = new ToolcellError(ToolErrorType.CANCELLED, 'The shell session was closed while it opened.');
        return;
      }
      try {
        if (session.limits && resolved.backend.kind !== 'docker') {
          throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, 'Container limits were asked for, and only the Docker sandbox can hold them.');
        }
        session.shell = await resolved.backend.openSession({
          sessionId: session.id,
          workspaceRoot: session.workspaceRoot,
          ...(session.limits ? { limits: session.limits } : {}),
          signal,
        });
        session.backend = resolved.backend;
        delete session.unavailable;
      } catch (error) {
        session.unavailable = error as ToolcellError;
      }
    })().finally(() => {
      delete session.opening;
    });
    return session.opening;
  }

  async #run(sessionId: string, port: MessagePort, request: RunRequest): Promise<void> {
    const session = this.#sessions.get(sessionId);
    if (!session) {
      port.postMessage({ type: 'error', error: { code: ToolErrorType.SHELL_EXECUTE_ERROR, message: `Unknown shell session ${sessionId}` } });
      return;
    }
    if (!session.shell) await this.#connect(session);
    if (!session.shell || !session.backend) {
      port.postMessage({ type: 'error', error: toWireError(session.unavailable) });
      return;
    }
    const settings = this.#settings;
    const env = buildShellEnvironment({
      backend: session.backend.kind,
      hostEnv: settings.hostEnv,
      passEnv: settings.passEnv,
      // The session's secrets win over a command's own values.
      extra: { ...request.env, ...session.secrets },
      cols: settings.limits.cols,
      rows: settings.limits.rows,
    });
    await runCommand({
      session: session.shell,
      request,
      env,
      port,
      limits: settings.limits,
      killGraceMs: settings.killGraceMs,
      savedOutputMaxBytes: settings.savedOutputMaxBytes,
      drainBytesPerSecond: settings.drainBytesPerSecond,
      ...(session.redactor ? { redactor: session.redactor } : {}),
    });
  }

  /** Cancels an opening still under way (which removes what it started), then closes the shell. */
  static async #close(session: ThreadSession): Promise<void> {
    session.closing.abort();
    await session.opening;
    await session.shell?.close();
  }
}

function describe(session: ThreadSession): OpenedSession {
  if (session.backend) return opened(session.id, session.backend, session.limits);
  return { sessionId: session.id, description: `unavailable: ${session.unavailable?.message ?? 'not open'}`, backend: 'unavailable' };
}

/** Where a session with these limits runs on `backend` (its runtime included). */
function opened(sessionId: string, backend: ShellBackend, limits: SessionLimits | undefined): OpenedSession {
  const runtime = backend.runtimeOf?.(limits);
  return { sessionId, description: backend.describe(limits), backend: backend.kind, ...(runtime !== undefined ? { runtime } : {}) };
}
