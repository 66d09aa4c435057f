import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerSettings } from '../config/settings-schema.js';
import { ToolcellError, ToolErrorType } from '../errors.js';
import { VERSION } from '../version.js';
import { loadClientSdk } from './client-sdk.js';
import type { ClientTransport } from './create-transport.js';
import { deliverInSentOrder } from './sent-order-delivery.js';

/** Default limit of one tool call (Gemini CLI's: 10 minutes). */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 600_000;
/** Default limit of connecting and listing tools. */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;

export type McpServerState = 'disconnected' | 'connecting' | 'connected' | 'failed';

export interface McpServerConnectionOptions {
  name: string;
  settings: McpServerSettings;
  /** Relative `cwd` settings resolve against it. */
  workspace: string;
}

export interface McpCallOptions {
  signal?: AbortSignal;
  /** Progress notifications from the server (they also reset the call's timeout). */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/**
 * One configured MCP server: connects lazily, remembers whether it is alive,
 * and reconnects on the next use after the server died or the connection
 * broke. Calls pass their AbortSignal to the SDK, which sends MCP
 * `notifications/cancelled` to the server when it fires.
 */
export class McpServerConnection {
  readonly name: string;
  readonly settings: McpServerSettings;
  readonly #workspace: string;
  #state: McpServerState = 'disconnected';
  #lastError: string | undefined;
  #client: Client | undefined;
  #transport: ClientTransport | undefined;
  #connecting: Promise<Client> | undefined;
  #closed = false;

  constructor(options: McpServerConnectionOptions) {
    this.name = options.name;
    this.settings = options.settings;
    this.#workspace = options.workspace;
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** Why the last connection attempt or the connection itself failed. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  get transportKind(): 'stdio' | 'http' {
    return this.settings.command !== undefined ? 'stdio' : 'http';
  }

  get callTimeoutMs(): number {
    return this.settings.timeout ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
  }

  /** Connects if not connected; concurrent callers share one attempt. Throws `mcp_server_unavailable`. */
  async connect(): Promise<Client> {
    if (this.#closed) throw new ToolcellError(ToolErrorType.MCP_SERVER_UNAVAILABLE, `MCP server "${this.name}" is closed.`);
    if (this.#client && this.#state === 'connected') return this.#client;
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /** Every tool the server offers (all pages). */
  async listTools(): Promise<McpToolInfo[]> {
    const client = await this.connect();
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#guard(() => client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.#connectTimeoutMs() }));
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < 10_000);
    return tools;
  }

  /**
   * Calls a tool by its server-side name. Rejects with a ToolcellError when
   * the server cannot be reached (`mcp_server_unavailable`), the call timed
   * out (`execution_timeout`) or failed at the protocol level
   * (`mcp_tool_error`); with the signal's reason when aborted. A result with
   * `isError` resolves: it is the tool's own failure.
   */
  async callTool(toolName: string, args: Record<string, unknown>, options: McpCallOptions = {}): Promise<CallToolResult> {
    const client = await this.connect();
    options.signal?.throwIfAborted();
    const timeout = this.callTimeoutMs;
    // The SDK adds an abort listener to the signal of every request and never removes it. The
    // caller's signal may outlive many calls (an agent's run): the SDK gets one of the call's own,
    // and the caller's listens only while the call runs.
    const call = new AbortController();
    const forward = (): void => call.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', forward, { once: true });
    try {
      const result = await this.#guard(
        () =>
          client.callTool({ name: toolName, arguments: args }, undefined, {
            timeout,
            resetTimeoutOnProgress: true,
            signal: call.signal,
            ...(options.onProgress ? { onprogress: options.onProgress } : {}),
          }),
        options.signal,
      );
      return result as CallToolResult;
    } finally {
      options.signal?.removeEventListener('abort', forward);
    }
  }

  /** Disconnects for good (a stdio server's process is ended). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#disconnect();
  }

  async #open(): Promise<Client> {
    await this.#disconnect();
    this.#state = 'connecting';
    const sdk = await loadClientSdk();
    const transport = sdk.createClientTransport(this.settings, { workspace: this.#workspace });
    const client = new sdk.Client({ name: 'toolcell', version: VERSION }, { capabilities: {} });
    this.#transport = transport;
    try {
      await client.connect(transport.transport, { timeout: this.#connectTimeoutMs() });
    } catch (error) {
      this.#lastError = this.#explain(error, 'could not connect');
      await client.close().catch(() => {});
      this.#transport = undefined;
      this.#state = 'failed';
      throw new ToolcellError(ToolErrorType.MCP_SERVER_UNAVAILABLE, `MCP server "${this.name}" ${this.#lastError}`, { cause: error });
    }
    deliverInSentOrder(transport.transport);
    client.onclose = () => {
      // The server went away (process exited, or the HTTP session ended): the next use reconnects.
      if (this.#client !== client) return;
      this.#client = undefined;
      if (!this.#closed) {
        this.#state = 'disconnected';
        this.#lastError = this.#explain(undefined, 'disconnected');
      }
    };
    this.#client = client;
    this.#state = 'connected';
    this.#lastError = undefined;
    return client;
  }

  async #disconnect(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    if (!this.#closed) this.#state = 'disconnected';
    if (client) await client.close().catch(() => {});
  }

  /** Runs a request and turns transport and protocol failures into clear ToolcellErrors. */
  async #guard<T>(request: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (signal?.aborted) throw error;
      const { McpError, ErrorCode } = await loadClientSdk();
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new ToolcellError(ToolErrorType.EXECUTION_TIMEOUT, `MCP server "${this.name}" did not answer within ${this.callTimeoutMs} ms.`, { cause: error });
      }
      if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) {
        throw new ToolcellError(ToolErrorType.MCP_TOOL_ERROR, `MCP server "${this.name}" returned an error: ${error.message}`, { cause: error });
      }
      // The connection is broken (closed, HTTP failure, unreachable): drop it so that the next call reconnects.
      const reason = this.#explain(error, 'failed');
      await this.#disconnect();
      this.#lastError = reason;
      throw new ToolcellError(ToolErrorType.MCP_SERVER_UNAVAILABLE, `MCP server "${this.name}" ${reason}; it will be reconnected on the next call.`, {
        cause: error,
      });
    }
  }

  #explain(error: unknown, what: string): string {
    const message = error === undefined ? '' : `: ${describeError(error)}`;
    const stderr = this.#transport?.stderrTail() ?? '';
    return `${what}${message}${stderr ? ` (server stderr: ${stderr.split('\n').slice(-5).join(' | ')})` : ''}`;
  }

  /** Connecting and listing get at least the default: a short call timeout must not make a slow-starting server unusable. */
  #connectTimeoutMs(): number {
    return Math.max(this.settings.timeout ?? 0, DEFAULT_MCP_CONNECT_TIMEOUT_MS);
  }
}

/** The message, plus the cause's when it says more (`fetch failed` → `fetch failed (connect ECONNREFUSED 127.0.0.1:1)`). */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}
