import test from 'ava';
import { z } from 'zod';
import type { Settings } from '../../src/config/settings-schema.js';
import { shellCommandRunner } from '../../src/discovery/shell-command-runner.js';
import { registerExtensionTools } from '../../src/runtime/extensions.js';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { ShellService } from '../../src/shell/shell-service.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createLocalTool } from '../../src/tools/defined-tool.js';
import { writeDiscoveryScripts } from '../discovery/discovery-scripts.js';
import { fixtureStdioSettings, tempWorkspace } from '../helpers/mcp.js';

const settings = (partial: Partial<Settings>): Settings => ({
  tools: {},
  mcpServers: {},
  sandbox: {},
  shell: {},
  sources: [],
  workspaceTrusted: true,
  warnings: [],
  ...partial,
});

function localTool(name: string, workspace: string) {
  return createLocalTool(
    defineTool({
      name,
      description: 'A local tool.',
      kind: 'read',
      parameters: z.object({}),
      execute: async () => ({ llmContent: 'local', returnDisplay: 'local' }),
    }),
    { workspace: { roots: [workspace], stateDir: `${workspace}/.toolcell` } },
  );
}

test('discovered and MCP tools are registered without replacing existing tools', async (t) => {
  const workspace = await tempWorkspace();
  const service = await ShellService.create();
  const session = await service.openSession({ sandbox: 'none', workspaceRoot: workspace.dir });
  t.teardown(async () => {
    await service.close();
    await workspace.cleanup();
  });
  const commands = await writeDiscoveryScripts(workspace.dir);
  const registry = new ToolRegistry({ onWarning: (message) => t.fail(message) });
  registry.register(localTool('mcp_fx_echo', workspace.dir));
  registry.register(localTool('discovered_tool_greet', workspace.dir));

  const extensions = await registerExtensionTools({
    registry,
    settings: settings({
      tools: commands,
      mcpServers: { fx: fixtureStdioSettings({ includeTools: ['echo', 'pid'] }), down: { command: '/nonexistent/server' } },
    }),
    workspace: workspace.dir,
    commandRunner: shellCommandRunner(session),
  });
  t.teardown(extensions.close);
  t.is(extensions.problems.length, 1);
  t.regex(extensions.problems[0] ?? '', /MCP server "down" could not connect/);
  t.is(registry.get('mcp_fx_echo')?.source?.type, 'local');
  t.is(registry.get('mcp_fx_echo_2')?.source?.type, 'mcp');
  t.is(registry.get('discovered_tool_greet')?.source?.type, 'local');
  t.is(registry.get('discovered_tool_greet_2')?.source?.type, 'discovered');
  t.true(registry.has('mcp_fx_pid'));
  t.deepEqual(
    extensions.mcpClients.status().map((server) => [server.name, server.state]),
    [
      ['fx', 'connected'],
      ['down', 'failed'],
    ],
  );
});

test('half a discovery configuration, or no runner, is a problem, not a crash', async (t) => {
  const workspace = await tempWorkspace();
  t.teardown(workspace.cleanup);
  const registry = new ToolRegistry();
  const half = await registerExtensionTools({ registry, settings: settings({ tools: { discoveryCommand: 'x' } }), workspace: workspace.dir });
  t.regex(half.problems[0] ?? '', /needs both tools\.discoveryCommand and tools\.callCommand/);
  const noRunner = await registerExtensionTools({
    registry,
    settings: settings({ tools: { discoveryCommand: 'x', callCommand: 'y' } }),
    workspace: workspace.dir,
  });
  t.regex(noRunner.problems[0] ?? '', /Tool discovery command "x" was not run: no sandbox session/);
  t.deepEqual(registry.list(), []);
});

test('a failing discovery command is reported by name and the MCP tools still load', async (t) => {
  const workspace = await tempWorkspace();
  const service = await ShellService.create();
  const session = await service.openSession({ sandbox: 'none', workspaceRoot: workspace.dir });
  t.teardown(async () => {
    await service.close();
    await workspace.cleanup();
  });
  const registry = new ToolRegistry();
  const extensions = await registerExtensionTools({
    registry,
    settings: settings({ tools: { discoveryCommand: 'exit 9', callCommand: 'true' }, mcpServers: { fx: fixtureStdioSettings({ includeTools: ['echo'] }) } }),
    workspace: workspace.dir,
    commandRunner: shellCommandRunner(session),
  });
  t.teardown(extensions.close);
  t.deepEqual(extensions.problems, ['Tool discovery command "exit 9" exited with code 9']);
  t.deepEqual(
    registry.list().map((tool) => tool.name),
    ['mcp_fx_echo'],
  );
});

test('bad options are TypeErrors naming the option', async (t) => {
  await t.throwsAsync(registerExtensionTools({ registry: {} as ToolRegistry, settings: settings({}), workspace: '/tmp' }), {
    instanceOf: TypeError,
    message: /options\.registry/,
  });
  await t.throwsAsync(registerExtensionTools({ registry: new ToolRegistry(), settings: settings({}), workspace: '' }), {
    instanceOf: TypeError,
    message: /options\.workspace/,
  });
});
