/**
 * What discovery needs from the shell service: run one command line to
 * completion with separate stdout/stderr and a stdin payload, inside the
 * sandbox session the runtime opened, with a time limit and abort. The shell
 * service's session handle is adapted to this in `shell-command-runner.ts`.
 */
export interface CommandRunRequest {
  /** A shell command line (run by the sandbox's shell). */
  command: string;
  /** Bytes for stdin; stdin is closed after them. */
  stdin?: string;
  /** Working directory relative to the workspace root ('' = the root). */
  cwd?: string;
  /** Total time limit; the process tree is killed when it passes. */
  timeoutMs: number;
  /** Output beyond this many bytes (per stream) is dropped and `truncated` is set. */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

export interface CommandRunResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  /** Signal name when the process was ended by one. */
  signal: string | null;
  aborted: boolean;
  timedOut: boolean;
  /** True when output passed `maxOutputBytes`. */
  truncated: boolean;
}

export interface CommandRunner {
  /** Where commands run, for confirmations: e.g. `docker (toolcell-sandbox:…)`. */
  describe(): string;
  /** Runs a command to completion. Rejects only when the command could not be started at all. */
  run(request: CommandRunRequest): Promise<CommandRunResult>;
}

/** Quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
