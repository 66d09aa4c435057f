/**
 * toolcell's public API: define tools, register them, schedule model calls,
 * and choose where they execute. Everything else is internal.
 */
export { AgentErrorCode, ToolcellError, ToolErrorType, WarningCode, isToolcellError, type ErrorCode } from './errors.js';

export type {
  Tool,
  ToolKind,
  ToolResult,
  ToolExecuteContext,
  SavedOutput,
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
export { BaseTool, type ToolFields } from './tools/base-tool.js';
export { toolErrorResult } from './tools/results.js';
export { GEMINI_FUNCTION_NAME, MCP_TOOL_NAME, toGeminiFunctionName, toMcpToolName } from './tools/names.js';

export { ToolRegistry, type ToolRegistryOptions } from './registry/tool-registry.js';

export { Scheduler, type SchedulerOptions } from './scheduler/scheduler.js';
export type { ApprovalMode } from './scheduler/approval.js';
export type { ConfirmationHandler, ConfirmationRequest, ExternalEditor } from './scheduler/confirmation-flow.js';
export type { ToolCall, ToolCallRequest, ToolCallResponse, ToolCallStatus, ToolCallDecision, CompletedToolCall } from './scheduler/tool-call.js';
export { convertToFunctionResponse } from './scheduler/function-response.js';

export { PolicyEngine, type PolicyCall, type PolicyVerdict } from './policy/policy-engine.js';
export { checkRules, loadPolicyFile } from './policy/load-policy-file.js';
export { loadPolicySources, type PolicySourceOptions } from './policy/policy-sources.js';
export type { PolicyDecision, PolicyRule, PolicyRuleInput, PolicyRuleSource } from './policy/policy-rule.js';

export { WorkerPool, type WorkerPoolOptions } from './worker-pool/worker-pool.js';

export type { TelemetrySink, ToolCallEvent } from './telemetry/events.js';
export { JsonlFileSink } from './telemetry/jsonl-sink.js';

export { createRuntime, type Runtime, type RuntimeOptions, type SandboxMode } from './runtime/runtime.js';

export { createHostingServer, type CreateHostingServerOptions, type HostedTenants } from './hosting/index.js';

export { ShellService, type ShellServiceOptions } from './shell/shell-service.js';
export type { ShellRunOptions, ShellRunResult } from './shell/run-types.js';
export { createShellTool, type ShellToolOptions } from './tools/shell/shell-tool.js';
export { createDockerBackend, probeDocker } from './backends/docker/index.js';

export { loadSettings } from './config/load-settings.js';
export type { Settings } from './config/settings-schema.js';
export { registerExtensionTools, type ExtensionTools, type RegisterExtensionToolsOptions } from './runtime/extensions.js';

export { Agent, type AgentOptions, type SendOptions } from './agent/agent.js';
export type { AgentEvent, AgentOutcome, AgentStatus, AgentError, TokenUsage } from './agent/events.js';
export { createGeminiClient, resolveApiKey } from './agent/gemini-client.js';
export { DEFAULT_MODEL } from './agent/defaults.js';
export { OtelTelemetrySink } from './telemetry/otel.js';
