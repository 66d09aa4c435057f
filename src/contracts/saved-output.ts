/**
 * A tool's whole output, written to a file by the tool as it arrived
 * (`run_shell_command` streams it there from the shell data plane).
 */
export interface SavedOutput {
  /** The file; absent when it could not be written (`error` says why). */
  path?: string;
  error?: string;
  /** Size of the whole output, also of what the file could not hold. */
  bytes: number;
  lines: number;
  /** True when the file stopped at its size cap: it holds the first `savedLines` lines, then a line saying so. */
  cut: boolean;
  savedBytes: number;
  savedLines: number;
}
