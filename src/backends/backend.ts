import type { SessionLimits } from './session-limits.js';

/**
 * The seam between the shell service (output pipeline, timeouts, the
 * run_shell_command tool) and the places commands run: the host in a PTY, or
 * a hardened Docker container. Backends live in the shell data-plane thread,
 * never on the main thread, so their streams never load the main event loop.
 */

/** How a command is started. */
export interface SpawnOptions {
  command: string;
  /** Working directory relative to the workspace root ('' or '.' for the root). */
  cwd: string;
  /** The whole environment of the command: an allowlist built by the caller. */
  env: Record<string, string>;
  /** `pty`: one merged stream through a terminal; `pipes`: separate stdout/stderr and a stdin payload. */
  mode: 'pty' | 'pipes';
  cols?: number;
  rows?: number;
  /** Bytes written to stdin before it is closed (pipes mode). In pty mode stdin gets EOF at once. */
  stdin?: Uint8Array;
  /** Detach: the process keeps running in the session after spawn returns; killed when the session closes. */
  background?: boolean;
  /**
   * Output the sandbox sends in full; past it, only counts and each stream's
   * end (`onSkipped`). Lets a flood be dropped where it is made, on the
   * command's CPU share, instead of crossing the engine. Backends that run on
   * the host ignore it.
   */
  outputBudget?: OutputBudget;
}

/** Bytes sent in full across a command's streams, then bytes kept from the end of each stream. */
export interface OutputBudget {
  forwardBytes: number;
  tailBytes: number;
  /**
   * Past `forwardBytes`, bytes read from the command per second (default 0:
   * as fast as they come). A slower reader blocks the writer, as a slow
   * terminal does: a flood then costs nobody CPU, the kernel's terminal work
   * included, which no container limit accounts for.
   */
  drainBytesPerSecond?: number;
}

/** Output dropped past the budget, since the last report: counted, never sent. */
export interface SkippedOutput {
  bytes: number;
  lineFeeds: number;
  /** Whether the last dropped byte was a line feed (for a line count when no kept end follows). */
  endsWithLineFeed: boolean;
}

export interface ExitStatus {
  exitCode: number | null;
  /** Signal name, e.g. `SIGKILL`, when the process was ended by a signal. */
  signal: string | null;
  /** What the sandbox adds about the run, e.g. `network: refused example.com:443, not in sandbox.network.allow`. */
  notes?: string[];
}

/** A started command. */
export interface SpawnedProcess {
  /** PID inside the sandbox (container or host). */
  readonly pid: number;
  /** For background processes: where its output goes, as a path the user can read (host path). */
  readonly logPath?: string;
  /** Raw output chunks; `stream` is `stdout` for a PTY's merged stream. */
  onData(listener: (chunk: Uint8Array, stream: 'stdout' | 'stderr') => void): void;
  /**
   * Output dropped past `outputBudget`, in order with `onData`'s chunks: the
   * stream's kept end comes after its last report. Subscribe before `onData`.
   * Absent on backends that never drop output.
   */
  onSkipped?(listener: (skipped: SkippedOutput, stream: 'stdout' | 'stderr') => void): void;
  /** Settles once the process has exited AND all its output has been delivered. */
  readonly exited: Promise<ExitStatus>;
  /**
   * Ends the process and every descendant (process groups, setsid, double
   * forks included): SIGTERM, then SIGKILL after `graceMs` (default 200).
   * Resolves when nothing of it is left running.
   */
  kill(options?: { graceMs?: number }): Promise<void>;
}

/** One tenant's sandbox: files in /tmp and processes are never shared between sessions. */
export interface ShellSession {
  readonly id: string;
  spawn(options: SpawnOptions): Promise<SpawnedProcess>;
  /** Kills everything still running in the session (background jobs included) and frees it. */
  close(): Promise<void>;
}

export interface ShellBackend {
  readonly kind: 'docker' | 'host';
  /**
   * Where commands run, for confirmations and logs, e.g.
   * `docker (toolcell-sandbox:3f2a…, runtime runsc)`; with `limits`, where a
   * session with those limits runs (its own runtime).
   */
  describe(limits?: SessionLimits): string;
  /** The OCI runtime a session with `limits` runs on (`runc`, `runsc`); undefined off Docker. */
  runtimeOf?(limits?: SessionLimits): string | undefined;
  /**
   * `signal` cancels an opening still under way (a container still starting is removed); the promise then rejects with `cancelled`.
   * `limits`: the session's own container limits over the backend's (Docker only; the shell thread never sends them to the host backend).
   */
  openSession(options: { sessionId: string; workspaceRoot: string; limits?: SessionLimits; signal?: AbortSignal }): Promise<ShellSession>;
  /** Closes every session and frees the backend's resources. */
  close(): Promise<void>;
}
