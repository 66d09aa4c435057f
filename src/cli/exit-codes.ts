import { AgentErrorCode, ToolErrorType, isToolcellError, type ErrorCode } from '../errors.js';

/** Exit codes shared by every command; documented in README and --help. */
export const EXIT_OK = 0;
/** A runtime failure the command could not turn into output (e.g. the sandbox is unavailable). */
export const EXIT_FAILURE = 1;
/** Bad usage or malformed input: a one-line reason is printed on stderr. */
export const EXIT_USAGE = 2;
/** Interrupted by SIGINT; running calls were cancelled first. */
export const EXIT_INTERRUPTED = 130;
/** Stopped by SIGTERM, handled like SIGINT (128 + 15, the shell's convention). */
export const EXIT_TERMINATED = 143;

/** The exit code of a command stopped by `signal`. */
export function exitCodeForSignal(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? EXIT_TERMINATED : EXIT_INTERRUPTED;
}

/**
 * Failures of a command's set-up that the user fixes with an option, a
 * variable or a file (exit 2); any other failure is a runtime one (exit 1).
 */
const SET_UP_FAILURES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  AgentErrorCode.API_KEY_MISSING,
  ToolErrorType.INVALID_BASE_URL,
  ToolErrorType.INVALID_WORKSPACE,
  ToolErrorType.INVALID_SETTINGS,
  ToolErrorType.INVALID_POLICY,
  ToolErrorType.INVALID_INPUT,
]);

/** EXIT_USAGE for a set-up failure the user fixes, EXIT_FAILURE otherwise. */
export function exitCodeForSetUpFailure(error: unknown): number {
  return isToolcellError(error) && SET_UP_FAILURES.has(error.code) ? EXIT_USAGE : EXIT_FAILURE;
}
