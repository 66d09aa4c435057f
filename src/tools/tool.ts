import type { FunctionDeclaration, Part, PartListUnion } from '@google/genai';
import type { UpdateOutput } from '../contracts/live-output.js';
import type { CallSandbox } from '../contracts/sandbox-runtime.js';
import type { SavedOutput } from '../contracts/saved-output.js';
import type { ErrorCode } from '../errors.js';

/** What a tool does, used for approval policy and MCP annotations. */
export type ToolKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'fetch' | 'other';

export const TOOL_KINDS: readonly ToolKind[] = ['read', 'edit', 'delete', 'move', 'search', 'execute', 'fetch', 'other'];

/** Kinds that never change anything; the only ones `plan` mode lets through. */
export const READ_ONLY_KINDS: ReadonlySet<ToolKind> = new Set(['read', 'search', 'fetch']);

/** Kinds that change files in the workspace; `autoEdit` approves their confirmations. */
export const EDIT_KINDS: ReadonlySet<ToolKind> = new Set(['edit', 'delete', 'move']);

/** A file (and optionally a line) a call will touch; used to order edits to the same file. */
export interface ToolLocation {
  path: string;
  line?: number;
}

/** A proposed or applied change to one file, shown to people as a unified diff. */
export interface FileDiff {
  fileDiff: string;
  fileName: string;
  filePath: string;
  originalContent: string | null;
  newContent: string;
}

export type ToolResultDisplay = string | FileDiff;

export interface ToolResultError {
  message: string;
  type: ErrorCode;
}

/**
 * The outcome of one execution. `llmContent` goes to the model (a string, or
 * Parts such as inlineData images); `returnDisplay` goes to people. A failure
 * is a result with `error`, never a throw.
 */
export interface ToolResult {
  llmContent: PartListUnion;
  returnDisplay: ToolResultDisplay;
  summary?: string;
  error?: ToolResultError;
  /**
   * Set when the tool saved its whole output itself, at the path the
   * scheduler gave it (`ToolExecuteContext.outputFile`): the scheduler then
   * points the model at that file instead of saving `llmContent`.
   */
  savedOutput?: SavedOutput;
  /**
   * Lines of the whole text that `returnDisplay` shows only part of (a long
   * command output keeps its start and end), for "N more lines" counts.
   */
  displayLines?: number;
  /** Where a command of this call ran (the shell tool): reported in telemetry. */
  sandbox?: CallSandbox;
}

export type { SavedOutput } from '../contracts/saved-output.js';

/** What the scheduler tells `execute` about a call, besides its parameters. */
export interface ToolExecuteContext {
  callId: string;
  /**
   * Present when the scheduler cuts long outputs for the model: output of
   * more than `maxChars` characters reaches it as its start and end plus the
   * path of a file with the whole of it. A tool that can write its output
   * to `path` as it arrives does so and sets `ToolResult.savedOutput`;
   * otherwise the scheduler saves `llmContent` there itself.
   */
  outputFile?: { path: string; maxChars: number };
}

export type { LiveOutput, UpdateOutput } from '../contracts/live-output.js';

interface ConfirmationBase {
  title: string;
}

export interface EditConfirmationDetails extends ConfirmationBase {
  type: 'edit';
  fileName: string;
  filePath: string;
  fileDiff: string;
  originalContent: string | null;
  newContent: string;
  /** True while the user edits the proposal in an external editor. */
  isModifying?: boolean;
}

export interface ExecConfirmationDetails extends ConfirmationBase {
  type: 'exec';
  command: string;
  /** First word of the command; `proceed_always` is remembered per root command. */
  rootCommand: string;
  directory: string;
  /** Where the command will run, e.g. `docker (toolcell-sandbox:…)` or `host (no sandbox)`. */
  sandbox: string;
  /**
   * Set by the scheduler when "allow always" saves policy rules: the exact
   * command prefixes it allows from then on, and the file it writes them to.
   */
  alwaysAllow?: { prefixes: string[]; file: string };
}

export interface McpConfirmationDetails extends ConfirmationBase {
  type: 'mcp';
  serverName: string;
  toolName: string;
  toolDisplayName: string;
}

export interface InfoConfirmationDetails extends ConfirmationBase {
  type: 'info';
  prompt: string;
  urls?: string[];
}

/** What a tool asks the user to approve. Plain data: it may come from a worker thread. */
export type ToolConfirmationDetails = EditConfirmationDetails | ExecConfirmationDetails | McpConfirmationDetails | InfoConfirmationDetails;

export type ToolConfirmationOutcome = 'proceed_once' | 'proceed_always' | 'proceed_always_server' | 'proceed_always_tool' | 'modify_with_editor' | 'cancel';

/** The JSON Schema of a tool's parameters (an object schema). */
export type JsonSchema = Record<string, unknown>;

/** A validation: the parameters, or why not (with a code more precise than `invalid_tool_params` where one applies). */
export type ValidationResult<TParams> = { ok: true; params: TParams } | { ok: false; error: string; type?: ErrorCode };

/**
 * Lets the user edit a proposed change before it is applied
 * (`modify_with_editor`): given the file's current content and the user's
 * edited version of the proposal, the tool returns the parameters that
 * produce exactly that version.
 */
export interface ModifiableToolSupport<TParams> {
  createUpdatedParams(input: { originalContent: string; modifiedContent: string; params: TParams }): TParams;
}

/**
 * The Tool contract (Gemini CLI's DeclarativeTool, README "The library"). Implementations are usually made with
 * `defineTool` + `createLocalTool` / a worker pool, or come from discovery and
 * MCP. Every method except `execute` must be cheap and side-effect free.
 */
export interface Tool<TParams = unknown> {
  /** Name the model calls; matches Gemini's `^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`. */
  readonly name: string;
  readonly displayName: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly parametersJsonSchema: JsonSchema;
  /** True when `execute` reports live output through `updateOutput`. */
  readonly canUpdateOutput: boolean;
  readonly isOutputMarkdown: boolean;
  /** Set for tools whose proposals the user may edit (`modify_with_editor`). */
  readonly modifiable?: ModifiableToolSupport<TParams>;
  /** Extra facts for MCP annotations and UIs (e.g. the MCP server a tool came from). */
  readonly source?: ToolSource;

  /** The Gemini FunctionDeclaration of this tool. */
  declaration(): FunctionDeclaration;
  /** Checks raw model arguments; returns typed params (defaults applied) or a message. */
  validateParams(raw: unknown): ValidationResult<TParams>;
  /** One line describing this concrete call, for people. */
  describe(params: TParams): string;
  toolLocations(params: TParams): ToolLocation[];
  /** Details to show the user before running, or false when no confirmation is needed. */
  shouldConfirmExecute(params: TParams, signal: AbortSignal): Promise<ToolConfirmationDetails | false>;
  execute(params: TParams, signal: AbortSignal, updateOutput?: UpdateOutput, context?: ToolExecuteContext): Promise<ToolResult>;
}

export type ToolSource =
  | { type: 'builtin' }
  | { type: 'local' }
  | { type: 'discovered'; command: string }
  | { type: 'mcp'; serverName: string; serverToolName: string; trusted: boolean };

export type { FunctionDeclaration, Part, PartListUnion };
