import { z } from 'zod';
import { objectWithMethods, parseOptions } from '../contracts/parse-options.js';
import type { Settings } from '../config/settings-schema.js';
import type { CommandRunner } from '../discovery/command-runner.js';
import { discoverCommandTools } from '../discovery/discover-command-tools.js';
import type { DiscoveredTool } from '../discovery/discovered-tool.js';
import { errorMessage } from '../errors.js';
import { McpClientManager } from '../mcp/mcp-client-manager.js';
import type { McpTool } from '../mcp/mcp-tool.js';
import type { ToolRegistry } from '../registry/tool-registry.js';

const registerExtensionToolsOptionsSchema = z.object({
  registry: objectWithMethods<ToolRegistry>('register', 'list'),
  /** From `loadSettings`. */
  settings: z.custom<Settings>((value) => typeof value === 'object' && value !== null, { error: 'must be Settings (from loadSettings)' }),
  /** The workspace root (real path): relative MCP `cwd`s resolve against it. */
  workspace: z.string().min(1),
  /**
   * Runs the discovery and call commands: the shell session of the runtime
   * (the sandbox by default; see `shellCommandRunner`). Without it, a
   * configured discovery command is reported as a problem and skipped.
   */
  commandRunner: z.custom<CommandRunner>().optional(),
});

export type RegisterExtensionToolsOptions = z.input<typeof registerExtensionToolsOptionsSchema>;

/** The extension tools of one runtime; `close` ends MCP connections (and stdio servers). */
export interface ExtensionTools {
  mcpClients: McpClientManager;
  discoveredTools: DiscoveredTool[];
  mcpTools: McpTool[];
  /** One line per thing that could not be used (a failing discovery command, an unreachable MCP server). Not fatal. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * Registers the tools the settings describe beyond the built-ins: those the
 * discovery command announces (`discovered_tool_<name>`, run through
 * `commandRunner`), then every MCP server's (`mcp_<server>_<tool>`). Names
 * never replace a registered tool: collisions get a suffix. Failures are
 * collected in `problems`, never thrown, so one broken server does not take
 * the built-in tools down with it.
 */
export async function registerExtensionTools(raw: RegisterExtensionToolsOptions): Promise<ExtensionTools> {
  const options = parseOptions(registerExtensionToolsOptionsSchema, raw, 'registerExtensionTools');
  const { registry, settings } = options;
  const problems: string[] = [];
  const taken = new Set(registry.list().map((tool) => tool.name));

  let discoveredTools: DiscoveredTool[] = [];
  const { discoveryCommand, callCommand } = settings.tools;
  if (discoveryCommand !== undefined || callCommand !== undefined) {
    if (discoveryCommand === undefined || callCommand === undefined) {
      problems.push('Tool discovery needs both tools.discoveryCommand and tools.callCommand in settings; discovered tools were not loaded.');
    } else if (!options.commandRunner) {
      problems.push(`Tool discovery command "${discoveryCommand}" was not run: no sandbox session is available to run it.`);
    } else {
      try {
        discoveredTools = await discoverCommandTools({
          discoveryCommand,
          callCommand,
          runner: options.commandRunner,
          trusted: settings.tools.discoveryTrusted === true,
          takenNames: taken,
          ...(settings.tools.discoveryTimeoutMs !== undefined ? { discoveryTimeoutMs: settings.tools.discoveryTimeoutMs } : {}),
          ...(settings.tools.callTimeoutMs !== undefined ? { callTimeoutMs: settings.tools.callTimeoutMs } : {}),
        });
        for (const tool of discoveredTools) registry.register(tool);
      } catch (error) {
        problems.push(errorMessage(error));
      }
    }
  }

  const mcpClients = new McpClientManager({ servers: settings.mcpServers, workspace: options.workspace });
  const discovered = await mcpClients.discover({ takenNames: taken });
  for (const tool of discovered.tools) registry.register(tool);
  problems.push(...discovered.problems);

  return {
    mcpClients,
    discoveredTools,
    mcpTools: discovered.tools,
    problems,
    close: () => mcpClients.close(),
  };
}
