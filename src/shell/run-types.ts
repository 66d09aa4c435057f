import type { LiveOutput } from '../contracts/live-output.js';
import type { SandboxMode } from '../contracts/sandbox-mode.js';

export type { SandboxMode };

/** Default inactivity limit: a command that prints nothing for this long is ended (today's Gemini CLI). */
export const DEFAULT_INACTIVITY_TIMEOUT_MS = 300_000;

/** One command for `ShellSessionHandle.run`. */
export interface ShellRunOptions {
  command: string;
  /** Working directory, relative to the workspace root (or absolute inside it). Default: the root. */
  cwd?: string;
  /** Extra environment values for this command, on top of the allowlist. */
  env?: Record<string, string>;
  /**
   * `pty` (default): one stream through a terminal, rendered as a person
   * would see it; stdin reads end-of-file. `pipes`: separate stdout and
   * stderr as text, and `stdin` is written to the command.
   */
  mode?: 'pty' | 'pipes';
  /** Bytes for stdin (pipes mode only). */
  stdin?: string | Uint8Array;
  /** Start detached and return at once with its PID and log path; it ends with the session. */
  background?: boolean;
  timeouts?: {
    /** End the command after this long without output. Default 300 000; 0 disables it. */
    inactivityMs?: number;
    /** End the command after this long in total. Default: no limit. */
    wallMs?: number;
  };
  /** Aborting ends the command's whole process tree; the result keeps the partial output. */
  signal?: AbortSignal;
  /** Throttled live output: the rendered text so far, or binary progress. */
  onOutput?: (output: LiveOutput) => void;
}

/** How a command ended and what it printed. */
export interface ShellRunResult {
  /** The rendered output (pty), or stdout then stderr (pipes); a one-line note for binary output. */
  output: string;
  /** Pipes mode only. */
  stdout?: string;
  stderr?: string;
  exitCode: number | null;
  /** Signal name when the command was ended by one, e.g. `SIGKILL`. */
  signal: string | null;
  /** True when the caller's signal cancelled the command. */
  aborted: boolean;
  timedOut: 'inactivity' | 'wall' | null;
  /** Set when the output was binary; `output` then only describes it. */
  binary: { bytes: number } | null;
  /** True when the output passed the byte cap and only its start and end are kept. */
  truncated: boolean;
  /** Every byte the command wrote, also past the cap. */
  totalBytes: number;
  /** PID of the command (inside the sandbox). */
  pid: number;
  /** Background runs: the PID of the detached process, and where its output goes. */
  backgroundPid?: number;
  logPath?: string;
}
