import type { ErrorCode } from '../errors.js';
import type { MessagePort } from 'node:worker_threads';
import type { LiveOutput } from '../contracts/live-output.js';
import type { OutputLimits } from './output/output-pipeline.js';
import type { SandboxMode, ShellRunResult } from './run-types.js';
import type { SessionLimits } from '../backends/session-limits.js';

/**
 * Messages between the main thread (ShellService) and the shell thread.
 * Control messages travel on the worker's own port; each run gets a
 * MessageChannel of its own, whose port carries its live output, its
 * result and its cancel, so runs never queue behind each other.
 */

/** Everything the shell thread needs, fixed when the service starts (workerData). */
export interface ShellThreadSettings {
  limits: OutputLimits;
  /** SIGTERM → SIGKILL delay when a command is ended. */
  killGraceMs: number;
  /**
   * Host environment values read on the main thread: the allowlist's own
   * names (PATH, HOME, LANG…, used on the host only) and the names in `passEnv`.
   */
  hostEnv: Record<string, string>;
  /** Host variables the user allowed by name. */
  passEnv: string[];
  /** Options for the Docker backend, passed through unchanged. */
  docker: Record<string, unknown>;
  /** Size cap of a saved output's file (ShellRunOptions.saveOutput). */
  savedOutputMaxBytes: number;
  /** Past a command's output budget, bytes per second read from it in a container (0: as fast as it writes). */
  drainBytesPerSecond: number;
}

/** A boundary-crossing error: a stable code and a message. */
export interface WireError {
  code: ErrorCode;
  message: string;
}

/** What a run sends to the shell thread (the serialisable part of ShellRunOptions). */
export interface RunRequest {
  command: string;
  cwd: string;
  env: Record<string, string>;
  mode: 'pty' | 'pipes';
  stdin?: Uint8Array;
  background: boolean;
  inactivityMs: number;
  wallMs?: number;
  /** False when nobody listens: the thread then sends no live output at all. */
  live: boolean;
  saveOutput?: { path: string; afterChars: number };
}

export type ThreadRequest =
  | {
      type: 'open';
      id: number;
      sessionId: string;
      sandbox: SandboxMode;
      workspaceRoot: string;
      limits?: SessionLimits;
      /** Environment values every command of the session gets, and which are redacted from its output (OpenSessionOptions.secrets). */
      secrets?: Record<string, string>;
      awaitSandbox: boolean;
    }
  | { type: 'run'; sessionId: string; port: MessagePort; run: RunRequest }
  | { type: 'close-session'; id: number; sessionId: string }
  | { type: 'shutdown'; id: number };

/** What `open` answers: where the session's commands run, or why they cannot. */
export interface OpenedSession {
  sessionId: string;
  /** E.g. `docker (toolcell-sandbox:3f2a…, runtime runc)`, `host (no sandbox)`, or `unavailable: …`. */
  description: string;
  backend: 'docker' | 'host' | 'unavailable';
  /** The OCI runtime of the session's container (`runc`, `runsc`); absent off Docker. */
  runtime?: string;
}

export type ThreadReply = { type: 'reply'; id: number; ok: true; value?: unknown } | { type: 'reply'; id: number; ok: false; error: WireError };

/** Shell thread → main thread, on a run's port. */
export type RunEvent = { type: 'output'; output: LiveOutput } | { type: 'result'; result: ShellRunResult } | { type: 'error'; error: WireError };

/** Main thread → shell thread, on a run's port. */
export type RunControl = { type: 'cancel' };
