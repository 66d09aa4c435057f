import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRegistry } from '../../registry/tool-registry.js';
import type { Scheduler, SchedulerOptions } from '../../scheduler/scheduler.js';
import type { CompletedToolCall } from '../../scheduler/tool-call.js';
import type { LiveOutput } from '../../tools/tool.js';
import { VERSION } from '../../version.js';
import { completedCallToResult } from './call-response.js';
import { sharedSchemaValidator } from './shared-schema-validator.js';
import { toolAnnotations } from './tool-annotations.js';
import { ToolNameMap } from './tool-name-map.js';

/**
 * What a session's calls are scheduled with, its own: the policy that judges
 * them (a hosting tenant's rules over the operator's), where long outputs are
 * saved (its workspace), what is redacted from results (its secrets).
 */
export type SessionSchedulerSettings = Pick<SchedulerOptions, 'policy' | 'output' | 'redact'>;

export interface ToolServerOptions {
  /** The tools this MCP session serves. */
  registry: ToolRegistry;
  /** The session's own scheduler settings, handed to `createScheduler` with each call. */
  scheduler?: SessionSchedulerSettings;
  /**
   * Makes the scheduler for one call: headless (no `confirm` handler, so a
   * call that would ask is refused) with the approval mode `serve` was given,
   * and the session's settings. One per call, so that calls of a session run
   * concurrently.
   */
  createScheduler(options: { registry: ToolRegistry; onOutput: (callId: string, output: LiveOutput) => void } & SessionSchedulerSettings): Scheduler;
  /** Wraps every known tool's call: may refuse it (returning a result without calling `run`), queue it, or record it before it is answered. */
  aroundCall?: AroundToolCall;
}

/** One tool call as `aroundCall` sees it. */
export interface ToolCallInfo {
  callId: string;
  /** The tool's toolcell (Gemini) name. */
  tool: string;
  args: Record<string, unknown>;
  /** Aborted when the client cancels the call or the session closes. */
  signal: AbortSignal;
}

/** What running the call gave: the MCP result and the scheduler's record of it. */
export interface ToolCallRun {
  result: CallToolResult;
  completed: CompletedToolCall;
}

export type AroundToolCall = (call: ToolCallInfo, run: () => Promise<ToolCallRun>) => Promise<CallToolResult>;

/** Progress messages carry at most this much of a call's live output (its end). */
const PROGRESS_MESSAGE_CHARS = 2000;

/**
 * An MCP server (SDK v1, low-level `Server`: the tools' JSON Schemas are
 * served as they are) exposing a registry: `tools/list` gives every tool
 * with its MCP name, schema and kind-derived annotations; `tools/call` runs
 * the call through the scheduler, turns live output into progress
 * notifications when the client sent a progressToken, and passes the
 * request's AbortSignal down so that MCP cancellation stops the call.
 * Unknown tools are a protocol error (-32602); every other failure
 * (bad arguments, refused confirmation, tool errors) is an `isError` result.
 */
export function createToolServer(options: ToolServerOptions): Server {
  const { registry } = options;
  // The low-level Server, though the SDK marks it deprecated, is its way to serve raw JSON Schemas.
  const server = new Server(
    { name: 'toolcell', version: VERSION, title: 'toolcell: sandboxed tools' },
    {
      // logging: serveHttp tells a client why the server closed its session (a limit) as a notifications/message.
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: 'Tools run by toolcell: file tools are confined to the workspace, shell commands run in a sandbox.',
      jsonSchemaValidator: sharedSchemaValidator,
    },
  );
  const names = () => new ToolNameMap(registry.list().map((tool) => tool.name));

  server.setRequestHandler(ListToolsRequestSchema, async (): Promise<ListToolsResult> => {
    const map = names();
    return {
      tools: registry.list().map((tool) => ({
        name: map.toMcp(tool.name) ?? tool.name,
        title: tool.displayName,
        description: tool.description,
        inputSchema: { ...tool.parametersJsonSchema, type: 'object' },
        annotations: toolAnnotations(tool),
      })),
    };
  });

  // Protocol's own registration, not Server's: Server wraps a tools/call handler to check its result against
  // CallToolResultSchema, whose base64 check runs `atob` over every image, audio and blob on the main thread
  // (25 MB of a tenant's image: ~0.5 s in which no other tenant's call moved). Our results are made by
  // completedCallToResult, base64 from Buffer.toString; the request itself is still parsed by its schema.
  Protocol.prototype.setRequestHandler.call(server, CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const geminiName = names().toGemini(request.params.name);
    if (geminiName === undefined || !registry.has(geminiName)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
    const callId = `mcp-${String(extra.requestId)}-${randomUUID().slice(0, 8)}`;
    const progressToken = request.params._meta?.progressToken;
    let progress = 0;
    const onOutput = (id: string, output: LiveOutput): void => {
      if (id !== callId || progressToken === undefined || extra.signal.aborted) return;
      progress++;
      extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message: progressMessage(output) } }).catch(() => {});
    };
    const args = request.params.arguments ?? {};
    const run = async (): Promise<ToolCallRun> => {
      const scheduler = options.createScheduler({ ...options.scheduler, registry, onOutput });
      const [completed] = await scheduler.schedule([{ callId, name: geminiName, args }], extra.signal);
      if (!completed) throw new McpError(ErrorCode.InternalError, `The call of ${geminiName} did not complete.`);
      return { result: completedCallToResult(completed), completed };
    };
    if (options.aroundCall) return options.aroundCall({ callId, tool: geminiName, args, signal: extra.signal }, run);
    return (await run()).result;
  });
  return server;
}

function progressMessage(output: LiveOutput): string {
  if (typeof output !== 'string') return `Receiving binary output: ${output.bytesReceived} bytes`;
  return output.length > PROGRESS_MESSAGE_CHARS ? `…${output.slice(-PROGRESS_MESSAGE_CHARS)}` : output;
}
