import type { SandboxMode } from '../contracts/sandbox-mode.js';
import type { SavedOutputWithExcerpt } from './output/output-saver.js';

export type { SandboxMode };

export { DEFAULT_INACTIVITY_TIMEOUT_MS, type ShellRunOptions } from './run-options.js';

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
  /** What the sandbox adds about the run, e.g. `network: refused example.com:443, not in sandbox.network.allow`. */
  notes?: string[];
  /** PID of the command (inside the sandbox). */
  pid: number;
  /** Background runs: the PID of the detached process, and where its output goes. */
  backgroundPid?: number;
  logPath?: string;
}
