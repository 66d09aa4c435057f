/**
 * Stable, snake_case error types. They cross every boundary (worker → main,
 * ToolResult → model, CLI JSON) so their spelling is part of the public API:
 * add new ones, never rename.
 */
export const ToolErrorType = {
  // Scheduler and registry
  TOOL_NOT_REGISTERED: 'tool_not_registered',
  INVALID_TOOL_PARAMS: 'invalid_tool_params',
  POLICY_VIOLATION: 'policy_violation',
  CONFIRMATION_REQUIRED: 'confirmation_required',
  CANCELLED: 'cancelled',
  // Execution
  EXECUTION_FAILED: 'execution_failed',
  EXECUTION_TIMEOUT: 'execution_timeout',
  WORKER_OUT_OF_MEMORY: 'worker_out_of_memory',
  WORKER_CRASHED: 'worker_crashed',
  // Files and paths
  PATH_NOT_IN_WORKSPACE: 'path_not_in_workspace',
  FILE_NOT_FOUND: 'file_not_found',
  FILE_TOO_LARGE: 'file_too_large',
  FILE_WRITE_FAILURE: 'file_write_failure',
  PATH_IS_DIRECTORY: 'target_is_directory',
  PATH_IS_NOT_A_DIRECTORY: 'path_is_not_a_directory',
  PERMISSION_DENIED: 'permission_denied',
  READ_CONTENT_FAILURE: 'read_content_failure',
  EDIT_NO_OCCURRENCE_FOUND: 'edit_no_occurrence_found',
  EDIT_EXPECTED_OCCURRENCE_MISMATCH: 'edit_expected_occurrence_mismatch',
  EDIT_NO_CHANGE: 'edit_no_change',
  SEARCH_FAILED: 'search_failed',
  // Shell and sandbox
  SHELL_EXECUTE_ERROR: 'shell_execute_error',
  SANDBOX_UNAVAILABLE: 'sandbox_unavailable',
  SANDBOX_IMAGE_MISSING: 'sandbox_image_missing',
  // Extensions
  DISCOVERED_TOOL_EXECUTION_ERROR: 'discovered_tool_execution_error',
  MCP_TOOL_ERROR: 'mcp_tool_error',
  // Files and paths (added by the file tools)
  ATTEMPT_TO_CREATE_EXISTING_FILE: 'attempt_to_create_existing_file',
  FILE_IS_BINARY: 'file_is_binary',
} as const;

export type ToolErrorType = (typeof ToolErrorType)[keyof typeof ToolErrorType];

/**
 * The one error class that crosses toolcell's boundaries. `code` is a stable
 * snake_case string (a ToolErrorType for tool failures, or a usage/config code
 * such as `invalid_settings`), safe to branch on.
 */
export class ToolcellError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolcellError';
    this.code = code;
  }
}

/** True for a ToolcellError, also one that crossed a structured clone (worker → main). */
export function isToolcellError(value: unknown): value is ToolcellError {
  return (
    value instanceof ToolcellError ||
    (value instanceof Error && typeof (value as { code?: unknown }).code === 'string' && value.name === 'ToolcellError')
  );
}

/** A one-line message for any thrown value. */
export function errorMessage(value: unknown): string {
  if (value instanceof Error) return value.message;
  return String(value);
}

/** Punctuation that already ends a sentence (a closing quote or bracket may follow it). */
const SENTENCE_END = /[.!?…]["'’”)\]]*$/;

/**
 * Joins message parts as sentences: each part gets a full stop unless it
 * already ends one, so a detail quoted from elsewhere (an API's "Quota
 * exceeded." or an errno text) never yields "..". Empty parts are skipped.
 *
 * @example joinSentences('Gemini API server error (HTTP 500): Internal error.', 'Try again later.')
 * // 'Gemini API server error (HTTP 500): Internal error. Try again later.'
 */
export function joinSentences(...parts: string[]): string {
  return parts
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => (SENTENCE_END.test(part) ? part : `${part}.`))
    .join(' ');
}
