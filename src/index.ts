/**
 * toolcell's public API: define tools, register them, schedule model calls,
 * and choose where they execute. Everything else is internal.
 */
export { ToolcellError, ToolErrorType, isToolcellError } from './errors.js';

export type {
  Tool,
  ToolKind,
  ToolResult,
  ToolResultDisplay,
  ToolResultError,
  FileDiff,
  ToolLocation,
  LiveOutput,
  UpdateOutput,
  ToolConfirmationDetails,
  EditConfirmationDetails,
  ExecConfirmationDetails,
  McpConfirmationDetails,
  InfoConfirmationDetails,
  ToolConfirmationOutcome,
  ToolSource,
  JsonSchema,
  ValidationResult,
  ModifiableToolSupport,
} from './tools/tool.js';
export { defineTool, type ToolDefinition, type ToolContext, type WorkspaceInfo } from './tools/define-tool.js';
export { createLocalTool, DefinedTool, type ToolRunner, type RunOptions } from './tools/defined-tool.js';
export { toolErrorResult } from './tools/results.js';
export { GEMINI_FUNCTION_NAME, MCP_TOOL_NAME, toGeminiFunctionName, toMcpToolName } from './tools/names.js';

export { ToolRegistry, type ToolRegistryOptions } from './registry/tool-registry.js';

export { Scheduler, type SchedulerOptions } from './scheduler/scheduler.js';
export type { ApprovalMode } from './scheduler/approval.js';
export type { ConfirmationHandler, ConfirmationRequest, ExternalEditor } from './scheduler/confirmation-flow.js';
export type {
  ToolCall,
  ToolCallRequest,
  ToolCallResponse,
  ToolCallStatus,
  ToolCallDecision,
  CompletedToolCall,
} from './scheduler/tool-call.js';
export { convertToFunctionResponse } from './scheduler/function-response.js';

export { WorkerPool, type WorkerPoolOptions } from './exec/worker-pool.js';

export type { TelemetrySink, ToolCallEvent } from './telemetry/events.js';
export { JsonlFileSink } from './telemetry/jsonl-sink.js';

export { createRuntime, type Runtime, type RuntimeOptions, type SandboxMode } from './cli/runtime.js';
