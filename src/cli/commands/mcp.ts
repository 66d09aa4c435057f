import { realpath } from 'node:fs/promises';
import type { Command } from 'commander';
import { isToolcellError } from '../../errors.js';
import type { McpServerStatus } from '../../mcp/mcp-client-manager.js';
import { EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { settingsOption, trustWorkspaceOption, workspaceOption } from '../options.js';

interface McpListOptions {
  workspace: string;
  settings?: string;
  trustWorkspace?: boolean;
  json?: boolean;
}

/** Registers `toolcell mcp list`: connects to each configured MCP server and shows its state and tools. */
export function registerMcpCommand(program: Command): void {
  const mcp = program.command('mcp').description('MCP servers configured in settings (mcpServers).');
  mcp
    .command('list')
    .description('Connect to every configured MCP server and show its state and the tools it gives (as the model sees them).')
    .addOption(workspaceOption())
    .addOption(settingsOption())
    .addOption(trustWorkspaceOption())
    .option('--json', 'print the servers as a JSON array')
    .addHelpText(
      'after',
      `
Servers come from mcpServers in <workspace>/.toolcell/settings.json and
~/.toolcell/settings.json (the workspace wins), or only from --settings FILE.
A server that cannot be reached is listed with state "failed" and the reason.

Exit codes:
  0  the servers were listed (whatever their state)
  2  the settings are invalid (one line on stderr)`,
    )
    .action(async (options: McpListOptions) => {
      process.exitCode = await listServers(options);
    });
}

async function listServers(options: McpListOptions): Promise<number> {
  // Loaded on use (the MCP SDK, zod), so `--help` and `--version` start fast.
  const [{ loadSettings }, { McpClientManager }] = await Promise.all([import('../../config/load-settings.js'), import('../../mcp/mcp-client-manager.js')]);
  let workspace: string;
  let settings;
  try {
    workspace = await realpath(options.workspace);
    settings = loadSettings({
      workspace,
      ...(options.settings !== undefined ? { settingsFile: options.settings } : {}),
      ...(options.trustWorkspace ? { trustWorkspace: true } : {}),
    });
    for (const warning of settings.warnings) process.stderr.write(`toolcell: ${warning}\n`);
  } catch (error) {
    process.stderr.write(`toolcell: ${isToolcellError(error) || error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_USAGE;
  }
  const manager = new McpClientManager({ servers: settings.mcpServers, workspace });
  try {
    await manager.discover();
    const servers = manager.status();
    if (options.json) process.stdout.write(`${JSON.stringify(servers, null, 2)}\n`);
    else process.stdout.write(formatServers(servers, settings.sources));
  } finally {
    await manager.close();
  }
  return EXIT_OK;
}

function formatServers(servers: McpServerStatus[], sources: string[]): string {
  if (servers.length === 0) {
    const where = sources.length > 0 ? sources.join(', ') : 'no settings file found';
    return `No MCP servers configured (settings: ${where}).\n`;
  }
  const lines: string[] = [];
  for (const server of servers) {
    const trust = server.trusted ? ', trusted' : '';
    const count = server.state === 'connected' ? `, ${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}` : '';
    lines.push(`${server.name} (${server.transport}: ${server.target}) ${server.state}${count}${trust}`);
    if (server.error !== undefined && server.state !== 'connected') lines.push(`  error: ${server.error}`);
    const width = Math.max(0, ...server.tools.map((tool) => tool.name.length));
    for (const tool of server.tools) {
      const firstLine = tool.description.split('\n')[0] ?? '';
      lines.push(`  ${tool.name.padEnd(width)}  ${firstLine.length > 100 ? `${firstLine.slice(0, 99)}…` : firstLine}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
