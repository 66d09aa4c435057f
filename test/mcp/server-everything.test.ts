import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import test from 'ava';
import type { McpServerSettings } from '../../src/config/settings-schema.js';
import { McpClientManager } from '../../src/mcp/mcp-client-manager.js';
import type { McpTool } from '../../src/mcp/mcp-tool.js';
import { packageRoot } from '../../src/paths.js';
import { stopProcess, tempWorkspace, waitForLine } from '../helpers/mcp.js';

/**
 * toolcell's MCP client against a server it did not write: the reference
 * "everything" server published on npm (a devDependency). Skipped, saying
 * so, when the package is not installed.
 */
const entry = join(packageRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const maybe = existsSync(entry) ? test : test.skip;
if (!existsSync(entry)) console.warn(`server-everything tests skipped: ${entry} is not installed`);

async function discover(settings: McpServerSettings) {
  const workspace = await tempWorkspace();
  const manager = new McpClientManager({ servers: { everything: settings }, workspace: workspace.dir });
  const { tools, problems } = await manager.discover();
  const tool = (name: string): McpTool => {
    const found = tools.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no ${name}; problems: ${problems.join('; ')}`);
    return found;
  };
  return { manager, tools, problems, tool, close: async () => (await manager.close(), await workspace.cleanup()) };
}

async function call(tool: McpTool, args: Record<string, unknown>, updates?: string[]) {
  const validation = tool.validateParams(args);
  if (!validation.ok) throw new Error(validation.error);
  return tool.execute(validation.params, new AbortController().signal, updates ? (output) => updates.push(String(output)) : undefined);
}

maybe('stdio: tools listed, text, image, structured content and progress', async (t) => {
  process.env['TOOLCELL_EVERYTHING_SECRET'] = 'do-not-leak';
  t.teardown(() => delete process.env['TOOLCELL_EVERYTHING_SECRET']);
  const env = await discover({ command: process.execPath, args: [entry, 'stdio'] });
  t.teardown(env.close);
  t.deepEqual(env.problems, []);
  t.true(env.tools.length >= 5);

  t.is((await call(env.tool('mcp_everything_echo'), { message: 'hi' })).llmContent, 'Echo: hi');
  t.regex(String((await call(env.tool('mcp_everything_get-sum'), { a: 2, b: 3 })).llmContent), /5/);

  const image = await call(env.tool('mcp_everything_get-tiny-image'), {});
  const parts = image.llmContent as Array<{ inlineData?: { mimeType?: string } }>;
  t.true(parts.some((part) => part.inlineData?.mimeType === 'image/png'));

  const structured = await call(env.tool('mcp_everything_get-structured-content'), { location: 'Chicago' });
  t.is(structured.error, undefined);
  t.regex(String(structured.llmContent), /temperature/);
  t.deepEqual((env.tool('mcp_everything_get-structured-content').parametersJsonSchema['properties'] as Record<string, any>)['location'].enum, [
    'New York',
    'Chicago',
    'Los Angeles',
  ]);

  const updates: string[] = [];
  const long = await call(env.tool('mcp_everything_trigger-long-running-operation'), { duration: 0.6, steps: 3 }, updates);
  t.is(long.error, undefined);
  // Every step, the last one too: it reaches the client just before the answer, often in the same read.
  t.deepEqual(updates, ['Progress: 1/3', 'Progress: 2/3', 'Progress: 3/3']);

  const envDump = String((await call(env.tool('mcp_everything_get-env'), {})).llmContent);
  t.false(envDump.includes('do-not-leak'));
});

maybe('Streamable HTTP: the same server over HTTP', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, [entry, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => stopProcess(child));
  await waitForLine(child, /listening on port (\d+)/, 'stderr');
  const env = await discover({ url: `http://127.0.0.1:${port}/mcp` });
  t.teardown(env.close);
  t.deepEqual(env.problems, []);
  t.is((await call(env.tool('mcp_everything_echo'), { message: 'over http' })).llmContent, 'Echo: over http');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
