import type { FunctionDeclaration } from '@google/genai';
import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { ToolErrorType, isToolcellError } from '../errors.js';
import { createParamsValidator } from '../discovery/json-schema-params.js';
import { sanitizeParameters } from '../discovery/sanitize-parameters.js';
import { toolErrorResult } from '../tools/results.js';
import type {
  JsonSchema,
  Tool,
  ToolConfirmationDetails,
  ToolKind,
  ToolLocation,
  ToolResult,
  ToolSource,
  UpdateOutput,
  ValidationResult,
} from '../tools/tool.js';
import { callResultToToolResult } from './call-result.js';
import type { McpServerConnection } from './mcp-server-connection.js';

export interface McpToolOptions {
  /** The registered name, `mcp_<server>_<tool>` sanitised and made unique. */
  name: string;
  /** The tool as the server listed it. */
  info: McpToolInfo;
  connection: McpServerConnection;
}

/**
 * A tool of an MCP server (`mcpServers`, README "Settings"). The model sees a cleaned copy of
 * the server's input schema; arguments are checked against the original.
 * Unless the server is trusted, each call asks for confirmation of type
 * `mcp`, whose `serverName`/`toolName` let the scheduler remember
 * `proceed_always_server` and `proceed_always_tool`. Server progress
 * notifications become live output; abort cancels the call on the server.
 */
export class McpTool implements Tool<Record<string, unknown>> {
  readonly name: string;
  readonly displayName: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly parametersJsonSchema: JsonSchema;
  readonly canUpdateOutput = true;
  readonly isOutputMarkdown = true;
  readonly source: ToolSource;
  readonly serverName: string;
  readonly serverToolName: string;
  readonly #connection: McpServerConnection;
  readonly #validate: (raw: unknown) => ValidationResult<Record<string, unknown>>;

  constructor(options: McpToolOptions) {
    const { info, connection } = options;
    this.#connection = connection;
    this.name = options.name;
    this.serverName = connection.name;
    this.serverToolName = info.name;
    this.displayName = info.annotations?.title ?? info.title ?? info.name;
    this.description = info.description?.trim() || `Tool ${info.name} of MCP server ${connection.name}`;
    // A server's hints are claims, not facts: only a trusted server's read-only claim changes the kind.
    this.kind = connection.settings.trust === true && info.annotations?.readOnlyHint === true ? 'read' : 'other';
    this.parametersJsonSchema = sanitizeParameters(info.inputSchema);
    this.#validate = createParamsValidator(info.inputSchema as JsonSchema);
    this.source = { type: 'mcp', serverName: connection.name, serverToolName: info.name, trusted: connection.settings.trust === true };
  }

  declaration(): FunctionDeclaration {
    return { name: this.name, description: this.description, parametersJsonSchema: this.parametersJsonSchema };
  }

  validateParams(raw: unknown): ValidationResult<Record<string, unknown>> {
    return this.#validate(raw);
  }

  describe(params: Record<string, unknown>): string {
    const args = JSON.stringify(params);
    return `${this.serverToolName} (${this.serverName} MCP server) ${args.length > 200 ? `${args.slice(0, 199)}…` : args}`;
  }

  toolLocations(): ToolLocation[] {
    return [];
  }

  async shouldConfirmExecute(_params: Record<string, unknown>, _signal: AbortSignal): Promise<ToolConfirmationDetails | false> {
    if (this.#connection.settings.trust === true) return false;
    return {
      type: 'mcp',
      title: 'Confirm MCP Tool Execution',
      serverName: this.serverName,
      toolName: this.serverToolName,
      toolDisplayName: this.displayName,
    };
  }

  async execute(params: Record<string, unknown>, signal: AbortSignal, updateOutput?: UpdateOutput): Promise<ToolResult> {
    try {
      const result = await this.#connection.callTool(this.serverToolName, params, {
        signal,
        ...(updateOutput
          ? { onProgress: (p: { progress: number; total?: number; message?: string }) => updateOutput(progressText(p)) }
          : {}),
      });
      return callResultToToolResult(result, { toolName: this.serverToolName, serverName: this.serverName });
    } catch (error) {
      if (signal.aborted) return toolErrorResult(ToolErrorType.CANCELLED, `${this.name} was cancelled.`);
      const message = error instanceof Error ? error.message : String(error);
      const type = isToolcellError(error) && error.code === ToolErrorType.EXECUTION_TIMEOUT ? ToolErrorType.EXECUTION_TIMEOUT : ToolErrorType.MCP_TOOL_ERROR;
      return toolErrorResult(type, message);
    }
  }
}

function progressText(progress: { progress: number; total?: number; message?: string }): string {
  if (progress.message) return progress.message;
  return progress.total !== undefined ? `Progress: ${progress.progress}/${progress.total}` : `Progress: ${progress.progress}`;
}
