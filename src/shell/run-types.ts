import type { LiveOutput } from '../contracts/live-output.js';
import type { SandboxMode } from '../contracts/sandbox-mode.js';
import type { SavedOutputWithExcerpt } from './output/output-saver.js';

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
  /**
   * Save the whole output to a file at `path` (an absolute path; the folder
   * is made when missing) once it passes `afterChars` characters; shorter
   * outputs never touch the disk. The shell thread writes it as it arrives,
   * as plain text (escape sequences removed, `\r` overwrites resolved, one
   * line per line the command wrote), up to the service's
   * `savedOutputMaxBytes`; `savedOutput` in the result says what it came to.
   * A binary output is not saved. Ignored for background runs.
   */
  saveOutput?: { path: string; afterChars: number };
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
  /** True when `output` keeps only the start and end of what the command wrote (it passed the byte cap or the character budget). */
  truncated: boolean;
  /** Every byte the command wrote, also past the cap. */
  totalBytes: number;
  /** Lines the command wrote (its line feeds, plus an unterminated last line), also past the caps. */
  totalLines: number;
  /** Where the output was saved and how big it was, when `saveOutput` was asked for and the output passed `afterChars`. */
  savedOutput?: SavedOutputWithExcerpt;
  /** PID of the command (inside the sandbox). */
  pid: number;
  /** Background runs: the PID of the detached process, and where its output goes. */
  backgroundPid?: number;
  logPath?: string;
}
