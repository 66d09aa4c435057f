/**
 * Every error code toolcell gives out: one closed set of stable snake_case
 * strings. They cross every boundary (worker → main, ToolResult → model,
 * CLI JSON, MCP) so their spelling is part of the public API: add new ones,
 * never rename. The name is Gemini CLI's (its tools' `ToolErrorType`); the
 * set also holds the codes of failures outside a tool call (bad input,
 * settings, servers), so one union serves every `code` and `error.type`.
 */
export const ToolErrorType = {
  // Scheduler and registry
  /** The model named a tool the registry does not have. */
  TOOL_NOT_REGISTERED: 'tool_not_registered',
  /** The arguments do not match the tool's parameter schema. */
  INVALID_TOOL_PARAMS: 'invalid_tool_params',
  /** The approval mode refused the call (plan mode runs only read-only tools). */
  POLICY_VIOLATION: 'policy_violation',
  /**
   * A policy rule (`deny`) refused the call, in any approval mode; the
   * message names the rule (file and index) so the model can try another way.
   */
  POLICY_DENIED: 'policy_denied',
  /** The call needs a person's confirmation and none can be asked. */
  CONFIRMATION_REQUIRED: 'confirmation_required',
  /** The call, or a start it waited for, was cancelled. */
  CANCELLED: 'cancelled',
  /** A batch named the same call id twice. */
  DUPLICATE_CALL_ID: 'duplicate_call_id',
  /** The scheduler is still running a batch. */
  SCHEDULER_BUSY: 'scheduler_busy',
  // Execution
  EXECUTION_FAILED: 'execution_failed',
  EXECUTION_TIMEOUT: 'execution_timeout',
  WORKER_OUT_OF_MEMORY: 'worker_out_of_memory',
  WORKER_CRASHED: 'worker_crashed',
  /** web_fetch could fetch none of the prompt's URLs (refused by sandbox.network, unreachable, not text); the message names each. */
  WEB_FETCH_FAILED: 'web_fetch_failed',
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
  /** A regular expression that only a backtracking engine could match (backreference, lookaround, …): patterns are matched in linear time (RE2); the message names what is refused. */
  UNSUPPORTED_PATTERN: 'unsupported_pattern',
  ATTEMPT_TO_CREATE_EXISTING_FILE: 'attempt_to_create_existing_file',
  FILE_IS_BINARY: 'file_is_binary',
  /** A file tool tried to create or change something in toolcell's own state folder (`.toolcell/`). */
  TOOLCELL_STATE_READ_ONLY: 'toolcell_state_read_only',
  // Shell and sandbox
  SHELL_EXECUTE_ERROR: 'shell_execute_error',
  /** A shell command longer than MAX_COMMAND_BYTES (131,071 UTF-8 bytes, Linux's limit on one argument of `bash -c`); it was not run or judged. */
  COMMAND_TOO_LONG: 'command_too_long',
  /** A shell session id that is unknown or already open. */
  INVALID_SESSION: 'invalid_session',
  SANDBOX_UNAVAILABLE: 'sandbox_unavailable',
  SANDBOX_IMAGE_MISSING: 'sandbox_image_missing',
  /** A step of `toolcell sandbox build` failed. */
  SANDBOX_BUILD_FAILED: 'sandbox_build_failed',
  // Extensions
  DISCOVERED_TOOL_EXECUTION_ERROR: 'discovered_tool_execution_error',
  /** The discovery command printed something that is not a list of FunctionDeclarations. */
  INVALID_DISCOVERY_OUTPUT: 'invalid_discovery_output',
  /** The discovery command could not be run or failed. */
  TOOL_DISCOVERY_FAILED: 'tool_discovery_failed',
  MCP_TOOL_ERROR: 'mcp_tool_error',
  /** An MCP server could not be reached or started. */
  MCP_SERVER_UNAVAILABLE: 'mcp_server_unavailable',
  // Input, settings and serving (failures outside a tool call)
  /** Malformed input: a calls file, a flag value, a request body. */
  INVALID_INPUT: 'invalid_input',
  /** A settings file that cannot be read or does not match its schema. */
  INVALID_SETTINGS: 'invalid_settings',
  /** A policy file that cannot be read, is not TOML, or has a rule that does not match the rule schema; names the file and the field. */
  INVALID_POLICY: 'invalid_policy',
  /** The workspace folder is missing or not a folder. */
  INVALID_WORKSPACE: 'invalid_workspace',
  /** A Gemini base URL that is not an http(s) URL. */
  INVALID_BASE_URL: 'invalid_base_url',
  /** Serving off loopback without a bearer token. */
  TOKEN_REQUIRED: 'token_required',
  /** A tool name Gemini would reject (defineTool, discovered and MCP tools). */
  INVALID_TOOL_NAME: 'invalid_tool_name',
  // Hosting
  /** A tenant's disk cap was lowered below what its workspace already holds; nothing changed. */
  DISK_LIMIT_BELOW_USAGE: 'disk_limit_below_usage',
  /** A capped workspace could not be created, mounted, resized or released; the message says which step and why. */
  DISK_CAP_FAILED: 'disk_cap_failed',
  // Hosting operations (audit log, OIDC, admin, HTTP front)
  /** The audit log file could not be opened or written; the call it was to record is not answered. */
  AUDIT_LOG_FAILED: 'audit_log_failed',
  /** A request body over the server's limit (HTTP 413). */
  REQUEST_TOO_LARGE: 'request_too_large',
  /** The OIDC issuer's discovery document or JWKS could not be fetched or does not fit (wrong issuer, no jwks_uri). */
  OIDC_DISCOVERY_FAILED: 'oidc_discovery_failed',
  /** An admin request (`toolcell hosting …`) that the server refused or could not answer; the message says which. */
  ADMIN_REQUEST_FAILED: 'admin_request_failed',
  // Hosting (`toolcell serve --tenants`)
  /** A tenants file that cannot be read or does not match its schema; names the file and the field. */
  INVALID_TENANTS_FILE: 'invalid_tenants_file',
  /** A tenant's limit (sessions, concurrentCalls, …) refused a session or a call; the message names the limit. */
  QUOTA_EXCEEDED: 'quota_exceeded',
  // Secrets for sandboxed commands
  /** A secret could not be given to the sandbox: its source is missing, its key file is absent or readable by others, or it does not decrypt; names the secret, never its value. */
  SECRET_UNAVAILABLE: 'secret_unavailable',
  // A cluster of hosting servers (`toolcell tenant … --etcd`)
  /** No tenant of that name in the cluster. */
  TENANT_NOT_FOUND: 'tenant_not_found',
  /** The node named is not serving in the cluster (not registered in etcd now); the message lists those that are. */
  NODE_NOT_SERVING: 'node_not_serving',
  /** A tenant move that cannot be made as asked: to the node it is on, while another move of it runs, an abort after it was re-pinned; the message says which. */
  TENANT_MOVE_REFUSED: 'tenant_move_refused',
  /** A tenant move that did not finish: a node reported a problem, or the wait ran out (the move stays recorded: run the command again to resume, or --abort). */
  TENANT_MOVE_FAILED: 'tenant_move_failed',
} as const;

export type ToolErrorType = (typeof ToolErrorType)[keyof typeof ToolErrorType];

/**
 * Stable codes for everything that can go wrong talking to the model (the
 * agent's errors and stream-json's error events). They
 * reach stream-json consumers and exit-code logic, so never rename one.
 */
export const AgentErrorCode = {
  API_KEY_MISSING: 'api_key_missing',
  API_QUOTA_EXCEEDED: 'api_quota_exceeded',
  API_AUTH_FAILED: 'api_auth_failed',
  API_MODEL_NOT_FOUND: 'api_model_not_found',
  API_BAD_REQUEST: 'api_bad_request',
  API_SERVER_ERROR: 'api_server_error',
  API_NETWORK_ERROR: 'api_network_error',
  API_STREAM_BROKEN: 'api_stream_broken',
  API_SAFETY_BLOCKED: 'api_safety_blocked',
  API_PROMPT_BLOCKED: 'api_prompt_blocked',
  API_MALFORMED_FUNCTION_CALL: 'api_malformed_function_call',
  API_ERROR: 'api_error',
  MAX_TURNS_EXCEEDED: 'max_turns_exceeded',
  CANCELLED: 'cancelled',
  INTERNAL_ERROR: 'internal_error',
} as const;

export type AgentErrorCode = (typeof AgentErrorCode)[keyof typeof AgentErrorCode];

/**
 * Every code toolcell gives out, closed: the type of `ToolcellError.code`
 * and of a tool result's `error.type`.
 */
export type ErrorCode = ToolErrorType | AgentErrorCode;

/** Codes of warnings: something people should know that did not stop the work. */
export const WarningCode = {
  /** The model's answer hit its output token limit and may be cut short. */
  MAX_TOKENS: 'max_tokens',
  /** Set-up found something to tell (an unreachable MCP server, an ignored setting). */
  RUNTIME_WARNING: 'runtime_warning',
} as const;

export type WarningCode = (typeof WarningCode)[keyof typeof WarningCode];

/**
 * The one error class that crosses toolcell's boundaries. `code` is one of
 * the closed set above (ErrorCode), safe to branch on.
 */
export class ToolcellError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolcellError';
    this.code = code;
  }
}

/** True for a ToolcellError, also one that crossed a structured clone (worker → main). */
export function isToolcellError(value: unknown): value is ToolcellError {
  return value instanceof ToolcellError || (value instanceof Error && typeof (value as { code?: unknown }).code === 'string' && value.name === 'ToolcellError');
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
