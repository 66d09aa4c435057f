import { z } from 'zod';
import { parseOptions } from '../contracts/parse-options.js';
import { mcpServerSettingsSchema } from '../config/settings-schema.js';
import { uniqueToolName } from '../discovery/unique-tool-name.js';
import { errorMessage } from '../errors.js';
import type { McpServerState } from './mcp-server-connection.js';
import { McpServerConnection } from './mcp-server-connection.js';
import { McpTool } from './mcp-tool.js';

/** What `toolcell mcp list` shows for one server. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  /** `command args…` or the URL. */
  target: string;
  state: McpServerState;
  trusted: boolean;
  error?: string;
  /** The tools registered from it. */
  tools: { name: string; serverToolName: string; description: string }[];
}

export interface McpDiscoveryResult {
  tools: McpTool[];
  /** One line per server that could not be used, e.g. `MCP server "x" could not connect: …`. */
  problems: string[];
}

const mcpClientManagerOptionsSchema = z.strictObject({
  /** The `mcpServers` settings, checked again by their schema for programs that pass them directly. */
  servers: z.record(z.string(), mcpServerSettingsSchema),
  /** The workspace root: a stdio server's default working folder. */
  workspace: z.string(),
});

export type McpClientManagerOptions = z.input<typeof mcpClientManagerOptionsSchema>;

/**
 * The configured MCP servers of one runtime: connects to all of them at
 * once, lists their tools (filtered by includeTools/excludeTools; exclude
 * wins), names them `mcp_<server>_<tool>` and keeps the connections for the
 * tools' calls. A server that fails is reported, not fatal.
 */
export class McpClientManager {
  readonly #connections: McpServerConnection[];
  readonly #tools = new Map<string, McpTool[]>();

  constructor(raw: McpClientManagerOptions) {
    const options = parseOptions(mcpClientManagerOptionsSchema, raw, 'McpClientManager');
    this.#connections = Object.entries(options.servers).map(([name, settings]) => new McpServerConnection({ name, settings, workspace: options.workspace }));
  }

  get connections(): readonly McpServerConnection[] {
    return this.#connections;
  }

  /**
   * Connects to every server and makes its tools. `takenNames` holds names
   * already registered; new names avoid them and are added to it. Servers
   * are named in settings order, so the same settings give the same names.
   */
  async discover(options: { takenNames?: Set<string> } = {}): Promise<McpDiscoveryResult> {
    const taken = options.takenNames ?? new Set<string>();
    const listed = await Promise.all(
      this.#connections.map(async (connection) => {
        try {
          return { connection, infos: await connection.listTools(), error: undefined };
        } catch (error) {
          return { connection, infos: undefined, error: errorMessage(error) };
        }
      }),
    );
    const tools: McpTool[] = [];
    const problems: string[] = [];
    for (const entry of listed) {
      if (entry.infos === undefined) {
        problems.push(entry.error);
        continue;
      }
      const { includeTools, excludeTools } = entry.connection.settings;
      const serverTools = entry.infos
        .filter((info) => !excludeTools?.includes(info.name))
        .filter((info) => includeTools === undefined || includeTools.includes(info.name))
        .map((info) => new McpTool({ name: uniqueToolName(`mcp_${entry.connection.name}_${info.name}`, taken), info, connection: entry.connection }));
      this.#tools.set(entry.connection.name, serverTools);
      tools.push(...serverTools);
    }
    return { tools, problems };
  }

  /** Each server, its state and its registered tools. */
  status(): McpServerStatus[] {
    return this.#connections.map((connection) => {
      const { settings } = connection;
      const status: McpServerStatus = {
        name: connection.name,
        transport: connection.transportKind,
        target: settings.command !== undefined ? [settings.command, ...(settings.args ?? [])].join(' ') : (settings.url ?? settings.httpUrl ?? ''),
        state: connection.state,
        trusted: settings.trust === true,
        tools: (this.#tools.get(connection.name) ?? []).map((tool) => ({
          name: tool.name,
          serverToolName: tool.serverToolName,
          description: tool.description,
        })),
      };
      if (connection.lastError !== undefined) status.error = connection.lastError;
      return status;
    });
  }

  /** Disconnects every server (stdio servers' processes end). */
  async close(): Promise<void> {
    await Promise.all(this.#connections.map((connection) => connection.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
