import type { MessagePort } from 'node:worker_threads';
import type { ToolcellError } from '../../errors.js';
import type { ShellBackend, ShellSession } from '../backend.js';
import { buildShellEnvironment } from '../environment.js';
import type { OpenedSession, RunRequest, ShellThreadSettings, ThreadReply, ThreadRequest } from '../protocol.js';
import type { SandboxChoice } from '../run-types.js';
import { runCommand, toWireError } from './run-command.js';
import { SandboxResolver } from './sandbox-resolver.js';

/** A session as the thread holds it: open on a backend, or failed closed (retried on each run). */
interface ThreadSession {
  id: string;
  sandbox: SandboxChoice;
  workspaceRoot: string;
  backend?: ShellBackend;
  shell?: ShellSession;
  /** Why commands cannot run (no sandbox); cleared once a retry succeeds. */
  unavailable?: ToolcellError;
  opening?: Promise<void>;
}

/**
 * The shell data plane: owns every backend (so every PTY lives in this one
 * thread), the sessions, and each run's output pipeline. Answers control
 * requests on `control` and each run on its own port.
 */
export function startShellThread(control: MessagePort, settings: ShellThreadSettings): void {
  const resolver = new SandboxResolver({ docker: settings.docker });
  const sessions = new Map<string, ThreadSession>();
  const reply = (message: ThreadReply): void => control.postMessage(message);

  /** Opens (or re-tries opening) the session's sandbox. */
  const connect = (session: ThreadSession): Promise<void> => {
    session.opening ??= (async () => {
      const resolved = await resolver.resolve(session.sandbox);
      if (!resolved.ok) {
        session.unavailable = resolved.error;
        return;
      }
      try {
        session.shell = await resolved.backend.openSession({ sessionId: session.id, workspaceRoot: session.workspaceRoot });
        session.backend = resolved.backend;
        delete session.unavailable;
      } catch (error) {
        session.unavailable = error as ToolcellError;
      }
    })().finally(() => {
      delete session.opening;
    });
    return session.opening;
  };

  const describe = (session: ThreadSession): OpenedSession => ({
    sessionId: session.id,
    description: session.backend ? session.backend.describe() : `unavailable: ${session.unavailable?.message ?? 'not open'}`,
    backend: session.backend?.kind ?? 'unavailable',
  });

  const run = async (sessionId: string, port: MessagePort, request: RunRequest): Promise<void> => {
    const session = sessions.get(sessionId);
    if (!session) {
      port.postMessage({ type: 'error', error: { code: 'shell_execute_error', message: `Unknown shell session ${sessionId}` } });
      return;
    }
    if (!session.shell) await connect(session);
    if (!session.shell || !session.backend) {
      port.postMessage({ type: 'error', error: toWireError(session.unavailable) });
      return;
    }
    const env = buildShellEnvironment({
      backend: session.backend.kind,
      hostEnv: settings.hostEnv,
      passEnv: settings.passEnv,
      extra: request.env,
      cols: settings.limits.cols,
      rows: settings.limits.rows,
    });
    await runCommand({ session: session.shell, request, env, port, limits: settings.limits, killGraceMs: settings.killGraceMs, savedOutputMaxBytes: settings.savedOutputMaxBytes });
  };

  control.on('message', (message: ThreadRequest) => {
    switch (message.type) {
      case 'open': {
        if (sessions.has(message.sessionId)) {
          reply({ type: 'reply', id: message.id, ok: false, error: { code: 'invalid_session', message: `Shell session ${message.sessionId} is already open` } });
          return;
        }
        const session: ThreadSession = { id: message.sessionId, sandbox: message.sandbox, workspaceRoot: message.workspaceRoot };
        sessions.set(session.id, session);
        void connect(session).then(() => reply({ type: 'reply', id: message.id, ok: true, value: describe(session) }));
        return;
      }
      case 'run':
        void run(message.sessionId, message.port, message.run).catch((error: unknown) => {
          message.port.postMessage({ type: 'error', error: toWireError(error) });
        });
        return;
      case 'close-session': {
        const session = sessions.get(message.sessionId);
        sessions.delete(message.sessionId);
        void (async () => {
          await session?.opening;
          await session?.shell?.close();
        })().then(
          () => reply({ type: 'reply', id: message.id, ok: true }),
          (error: unknown) => reply({ type: 'reply', id: message.id, ok: false, error: toWireError(error) }),
        );
        return;
      }
      case 'shutdown':
        void (async () => {
          const closing = [...sessions.values()].map(async (session) => {
            await session.opening;
            await session.shell?.close();
          });
          sessions.clear();
          await Promise.allSettled(closing);
          await resolver.close();
        })().then(() => reply({ type: 'reply', id: message.id, ok: true }));
        return;
    }
  });
}
