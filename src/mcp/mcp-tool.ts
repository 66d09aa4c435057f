import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { ToolErrorType, isToolcellError } from '../errors.js';
import { JsonSchemaTool } from '../discovery/json-schema-tool.js';
import { toolErrorResult } from '../tools/results.js';
import type { ToolConfirmationDetails, ToolResult, UpdateOutput } from '../tools/tool.js';
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
export class McpTool extends JsonSchemaTool {
  readonly serverName: string;
  readonly serverToolName: string;
  readonly #connection: McpServerConnection;

  constructor(options: McpToolOptions) {
    const { info, connection } = options;
    super({
      name: options.name,
      displayName: info.annotations?.title ?? info.title ?? info.name,
      description: info.description?.trim() || `Tool ${info.name} of MCP server ${connection.name}`,
      // A server's hints are claims, not facts: only a trusted server's read-only claim changes the kind.
      kind: connection.settings.trust === true && info.annotations?.readOnlyHint === true ? 'read' : 'other',
      inputSchema: info.inputSchema,
      canUpdateOutput: true,
      isOutputMarkdown: true,
      source: { type: 'mcp', serverName: connection.name, serverToolName: info.name, trusted: connection.settings.trust === true },
    });
    this.#connection = connection;
    this.serverName = connection.name;
    this.serverToolName = info.name;
  }

  describe(params: Record<string, unknown>): string {
    const args = JSON.stringify(params);
    return `${this.serverToolName} (${this.serverName} MCP server) ${args.length > 200 ? `${args.slice(0, 199)}…` : args}`;
  }

  override async shouldConfirmExecute(_params: Record<string, unknown>, _signal: AbortSignal): Promise<ToolConfirmationDetails | false> {
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
        ...(updateOutput ? { onProgress: (p: { progress: number; total?: number; message?: string }) => updateOutput(progressText(p)) } : {}),
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
