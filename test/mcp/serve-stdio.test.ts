import test from 'ava';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectServeStdio, fixtureStdioSettings, isAlive, tempWorkspace, toolResultText, writeWorkspaceSettings } from '../helpers/mcp.js';

/**
 * The SDK's own Client drives `toolcell serve --stdio` (a real process),
 * whose registry holds the fixture MCP server's tools: calls cross two real
 * MCP hops (client → toolcell → fixture).
 */
async function serve(t: { teardown: (fn: () => Promise<void>) => void }, args: string[] = ['--approval', 'yolo']) {
  const workspace = await tempWorkspace('toolcell-serve-');
  await writeWorkspaceSettings(workspace.dir, { mcpServers: { fx: fixtureStdioSettings({ includeTools: ['echo', 'add', 'slow', 'stats', 'pid', 'image'] }) } });
  // The fixture server is configured in the workspace's settings file, which applies in full only when trusted.
  const connection = await connectServeStdio({ workspace: workspace.dir, args: ['--trust-workspace', ...args] });
  t.teardown(async () => {
    await connection.client.close();
    await workspace.cleanup();
  });
  return connection;
}

test('tools/list gives every registry tool with its schema and kind annotations', async (t) => {
  const { client } = await serve(t);
  const { tools } = await client.listTools();
  const echo = tools.find((tool) => tool.name === 'mcp_fx_echo');
  t.truthy(echo, tools.map((tool) => tool.name).join(', '));
  t.deepEqual(echo!.inputSchema, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
  t.like(echo!.annotations, { readOnlyHint: false, destructiveHint: true, openWorldHint: true });
  for (const tool of tools) t.regex(tool.name, /^[A-Za-z0-9._-]{1,128}$/);
});

test('a call returns the tool output as MCP content', async (t) => {
  const { client } = await serve(t);
  const result = await client.callTool({ name: 'mcp_fx_echo', arguments: { text: 'through two hops' } });
  t.falsy(result.isError);
  t.is(toolResultText(result), 'through two hops');
  const image = await client.callTool({ name: 'mcp_fx_image', arguments: {} });
  const blocks = image.content as Array<{ type: string; mimeType?: string; text?: string }>;
  t.true(blocks.some((block) => block.type === 'text' && block.text === 'an image:'));
  t.like(
    blocks.find((block) => block.type === 'image'),
    { type: 'image', mimeType: 'image/png' },
  );
});

test('bad arguments are an isError result naming the problem', async (t) => {
  const { client } = await serve(t);
  const result = await client.callTool({ name: 'mcp_fx_add', arguments: { a: 'one' } });
  t.true(result.isError);
  t.is((result._meta as Record<string, unknown>)['toolcell/errorType'], 'invalid_tool_params');
  t.regex(toolResultText(result), /Invalid parameters for mcp_fx_add/);
});

test('an unknown tool is a protocol error', async (t) => {
  const { client } = await serve(t);
  const error = await t.throwsAsync(client.callTool({ name: 'no_such_tool', arguments: {} }));
  t.true(error instanceof McpError);
  t.is((error as McpError).code, -32602);
  t.regex(error!.message, /Unknown tool: no_such_tool/);
});

test('without an approving mode, a call that needs confirmation is refused', async (t) => {
  const { client } = await serve(t, ['--approval', 'default']);
  const result = await client.callTool({ name: 'mcp_fx_echo', arguments: { text: 'x' } });
  t.true(result.isError);
  t.is((result._meta as Record<string, unknown>)['toolcell/errorType'], 'confirmation_required');
});

test('live output arrives as progress notifications', async (t) => {
  const { client } = await serve(t);
  const messages: string[] = [];
  const result = await client.callTool({ name: 'mcp_fx_slow', arguments: { ms: 800 } }, undefined, {
    onprogress: (progress) => messages.push(progress.message ?? ''),
  });
  t.is(toolResultText(result), 'slept 800 ms');
  t.true(messages.length >= 1, messages.join(' | '));
  t.regex(messages[0] ?? '', /^step \d+\/16$/);
});

test('MCP cancellation aborts the call all the way down', async (t) => {
  const { client } = await serve(t);
  const controller = new AbortController();
  let progressed = 0;
  const running = client.callTool({ name: 'mcp_fx_slow', arguments: { ms: 60_000 } }, undefined, {
    signal: controller.signal,
    onprogress: () => {
      progressed++;
    },
  });
  while (progressed === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort('test cancels');
  await t.throwsAsync(running);
  // toolcell cancelled its own call to the fixture: the fixture's handler saw the abort.
  let cancelled = 0;
  for (let i = 0; i < 100 && cancelled === 0; i++) {
    cancelled = JSON.parse(toolResultText(await client.callTool({ name: 'mcp_fx_stats', arguments: {} }))).cancelled;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.is(cancelled, 1);
});

test('closing stdin ends serve and the MCP servers it started', async (t) => {
  const { client, transport } = await serve(t);
  const fixturePid = Number(toolResultText(await client.callTool({ name: 'mcp_fx_pid', arguments: {} })));
  const servePid = transport.pid!;
  t.true(isAlive(fixturePid));
  await client.close();
  for (let i = 0; i < 600 && (isAlive(servePid) || isAlive(fixturePid)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  t.false(isAlive(servePid));
  t.false(isAlive(fixturePid));
});
