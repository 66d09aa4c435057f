import { getEventListeners } from 'node:events';
import test from 'ava';
import type { McpServerSettings } from '../../src/config/settings-schema.js';
import { McpClientManager } from '../../src/mcp/mcp-client-manager.js';
import type { McpTool } from '../../src/mcp/mcp-tool.js';
import { GEMINI_FUNCTION_NAME } from '../../src/tools/names.js';
import type { ToolResult } from '../../src/tools/tool.js';
import { fixtureStdioSettings, isAlive, tempWorkspace } from '../helpers/mcp.js';

async function discover(servers: Record<string, McpServerSettings>) {
  const workspace = await tempWorkspace();
  const manager = new McpClientManager({ servers, workspace: workspace.dir });
  const result = await manager.discover();
  const tool = (name: string): McpTool => {
    const found = result.tools.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no tool ${name} among ${result.tools.map((t) => t.name).join(', ')}`);
    return found;
  };
  const close = async () => {
    await manager.close();
    await workspace.cleanup();
  };
  return { manager, ...result, tool, close };
}

async function call(tool: McpTool, args: Record<string, unknown> = {}, signal = new AbortController().signal, updates?: string[]): Promise<ToolResult> {
  const validation = tool.validateParams(args);
  if (!validation.ok) throw new Error(validation.error);
  return tool.execute(validation.params, signal, updates ? (output) => updates.push(String(output)) : undefined);
}

test('tools of a stdio server are registered as mcp_<server>_<tool> with valid Gemini names', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  t.deepEqual(env.problems, []);
  const names = env.tools.map((tool) => tool.name);
  t.true(names.includes('mcp_fixture_echo'));
  t.true(names.includes('mcp_fixture_weird.schema-tool'));
  for (const name of names) t.regex(name, GEMINI_FUNCTION_NAME);
  const long = env.tools.find((tool) => tool.serverToolName.startsWith('a_tool_with_a_really_long_name'));
  t.truthy(long);
  t.true(long!.name.length <= 64);
  t.true(long!.name.endsWith('forever'));
  t.deepEqual(env.tool('mcp_fixture_echo').source, { type: 'mcp', serverName: 'fixture', serverToolName: 'echo', trusted: false });
  t.is(env.manager.status()[0]?.state, 'connected');
});

test('a text result becomes llmContent', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const result = await call(env.tool('mcp_fixture_echo'), { text: 'hello there' });
  t.is(result.error, undefined);
  t.is(result.llmContent, 'hello there');
});

test('image and audio blocks become inlineData parts', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const image = await call(env.tool('mcp_fixture_image'));
  t.true(Array.isArray(image.llmContent));
  const parts = image.llmContent as Array<{ text?: string; inlineData?: { mimeType?: string; data?: string } }>;
  t.is(parts[0]?.text, 'an image:');
  t.is(parts[1]?.inlineData?.mimeType, 'image/png');
  t.true((parts[1]?.inlineData?.data ?? '').startsWith('iVBOR'));
  const audio = await call(env.tool('mcp_fixture_audio'));
  t.is((audio.llmContent as Array<{ inlineData?: { mimeType?: string } }>)[0]?.inlineData?.mimeType, 'audio/wav');
});

test('isError becomes an mcp_tool_error result carrying the server text', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const result = await call(env.tool('mcp_fixture_fail'));
  t.is(result.error?.type, 'mcp_tool_error');
  t.regex(result.error?.message ?? '', /failed on purpose/);
});

test('structured content is kept', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const result = await call(env.tool('mcp_fixture_add'), { a: 2, b: 40 });
  t.is(result.error, undefined);
  t.deepEqual(JSON.parse(String(result.llmContent)), { sum: 42 });
});

test('arguments are checked against the server schema before calling', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const bad = env.tool('mcp_fixture_add').validateParams({ a: 'two' });
  t.false(bad.ok);
  t.regex(bad.ok ? '' : bad.error, /b|number/);
  t.false(env.tool('mcp_fixture_echo').validateParams([1, 2]).ok);
});

test('the schema the model sees is cleaned for Gemini', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const schema = env.tool('mcp_fixture_weird.schema-tool').parametersJsonSchema as Record<string, any>;
  t.is(schema['$schema'], undefined);
  // `ghost` is required without being declared: calls are validated against the real schema, so the model must see it.
  t.deepEqual(schema['required'], ['mode', 'ghost']);
  t.deepEqual(schema['properties'].ghost, {});
  t.truthy(schema['properties'].mode.anyOf);
  t.is(schema['properties'].mode.default, undefined);
  t.is(schema['properties'].when.format, undefined);
  t.deepEqual(schema['properties'].level.enum, [1, 2, 3]);
  t.is(schema['properties'].tags.items.examples, undefined);
  t.is(schema['properties'].maybe.type, 'string');
  t.true(schema['properties'].maybe.nullable);
});

test('progress notifications become live output while the call runs', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  // The call runs until the first update has arrived, then is cancelled.
  const controller = new AbortController();
  const updates: string[] = [];
  const tool = env.tool('mcp_fixture_slow');
  const validation = tool.validateParams({ ms: 600_000 });
  if (!validation.ok) throw new Error(validation.error);
  const result = await tool.execute(validation.params, controller.signal, (output) => {
    updates.push(String(output));
    controller.abort();
  });
  t.is(result.error?.type, 'cancelled');
  t.regex(updates[0] ?? '', /^step 1\/12000$/);
});

test('progress sent just before the answer reaches the live output even when it arrives in one read with the answer', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  // The server writes the five notifications and the answer at once, as a
  // loaded host's client reads them. The SDK alone retires the call's
  // progress handler with the answer and drops the notifications.
  const updates: string[] = [];
  const result = await call(env.tool('mcp_fixture_burst'), { steps: 5 }, new AbortController().signal, updates);
  t.is(result.llmContent, 'burst of 5');
  t.deepEqual(updates, ['step 1/5', 'step 2/5', 'step 3/5', 'step 4/5', 'step 5/5']);
});

test('aborting a call sends MCP cancellation to the server', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const controller = new AbortController();
  const updates: string[] = [];
  const running = call(env.tool('mcp_fixture_slow'), { ms: 60_000 }, controller.signal, updates);
  while (updates.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort();
  const result = await running;
  t.is(result.error?.type, 'cancelled');
  // The server saw the cancellation: its handler's signal fired.
  let stats = { cancelled: 0 };
  for (let i = 0; i < 50 && stats.cancelled === 0; i++) {
    stats = JSON.parse(String((await call(env.tool('mcp_fixture_stats'))).llmContent));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.is(stats.cancelled, 1);
});

test("many calls under one caller's signal (an agent's run) leave no listener on it", async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const run = new AbortController();
  for (let i = 0; i < 25; i++) t.is((await call(env.tool('mcp_fixture_echo'), { text: `call ${i}` }, run.signal)).llmContent, `call ${i}`);
  // The SDK adds an abort listener to each request's signal and never removes it: 25 calls left 25 (and warned past 10).
  t.is(getEventListeners(run.signal, 'abort').length, 0);
});

test('a call over the server timeout fails as execution_timeout and is cancelled on the server', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings({ timeout: 200 }) });
  t.teardown(env.close);
  // Progress resets the timeout, so the slow tool is called without a progress listener.
  const result = await call(env.tool('mcp_fixture_slow'), { ms: 60_000 });
  t.is(result.error?.type, 'execution_timeout');
  t.regex(result.error?.message ?? '', /did not answer within 200 ms/);
  let stats = { cancelled: 0 };
  for (let i = 0; i < 50 && stats.cancelled === 0; i++) {
    // The stats call has the same 200 ms limit: on a loaded machine it can time out too, and is then asked again.
    const answer = await call(env.tool('mcp_fixture_stats'));
    if (answer.error === undefined) stats = JSON.parse(String(answer.llmContent));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.is(stats.cancelled, 1);
});

test('a server that dies fails its calls clearly and is restarted on the next call', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings() });
  t.teardown(env.close);
  const firstPid = Number((await call(env.tool('mcp_fixture_pid'))).llmContent);
  const crash = await call(env.tool('mcp_fixture_crash'));
  t.is(crash.error?.type, 'mcp_tool_error');
  t.regex(crash.error?.message ?? '', /MCP server "fixture" .*(closed|disconnected)/i);
  t.false(isAlive(firstPid));
  t.not(env.manager.status()[0]?.state, 'connected');
  const second = await call(env.tool('mcp_fixture_pid'));
  t.is(second.error, undefined);
  t.not(Number(second.llmContent), firstPid);
  t.is(env.manager.status()[0]?.state, 'connected');
});

test('excludeTools wins over includeTools', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings({ includeTools: ['echo', 'add', 'pid'], excludeTools: ['add'] }) });
  t.teardown(env.close);
  t.deepEqual(env.tools.map((tool) => tool.name).sort(), ['mcp_fixture_echo', 'mcp_fixture_pid']);
});

test('a stdio server gets a sanitised environment plus what env names', async (t) => {
  process.env['TOOLCELL_TEST_SECRET'] = 'hunter2';
  t.teardown(() => delete process.env['TOOLCELL_TEST_SECRET']);
  const env = await discover({ fixture: fixtureStdioSettings({ env: { PASSED: '${TOOLCELL_TEST_SECRET}', PLAIN: 'plain' } }) });
  t.teardown(env.close);
  const read = async (name: string) => (await call(env.tool('mcp_fixture_env'), { name })).llmContent;
  t.is(await read('TOOLCELL_TEST_SECRET'), '(unset)');
  t.is(await read('PASSED'), 'hunter2');
  t.is(await read('PLAIN'), 'plain');
  t.not(await read('PATH'), '(unset)');
});

test('confirmation is of type mcp unless the server is trusted', async (t) => {
  const env = await discover({ fixture: fixtureStdioSettings(), trusted: fixtureStdioSettings({ trust: true, includeTools: ['echo'] }) });
  t.teardown(env.close);
  const details = await env.tool('mcp_fixture_echo').shouldConfirmExecute({ text: 'x' }, new AbortController().signal);
  t.like(details, { type: 'mcp', serverName: 'fixture', toolName: 'echo' });
  t.false(await env.tool('mcp_trusted_echo').shouldConfirmExecute({ text: 'x' }, new AbortController().signal));
  t.like(env.tool('mcp_trusted_echo').source, { type: 'mcp', trusted: true });
});

test('a server that cannot start is a problem, not a crash, and the others still work', async (t) => {
  const env = await discover({
    broken: { command: '/nonexistent/toolcell-no-such-server' },
    exits: { command: process.execPath, args: ['-e', 'process.stderr.write("boom: no config\\n"); process.exit(4)'] },
    fixture: fixtureStdioSettings({ includeTools: ['echo'] }),
  });
  t.teardown(env.close);
  t.is(env.problems.length, 2);
  t.regex(env.problems[0] ?? '', /MCP server "broken" could not connect/);
  t.regex(env.problems[1] ?? '', /MCP server "exits" could not connect.*boom: no config/);
  t.deepEqual(
    env.tools.map((tool) => tool.name),
    ['mcp_fixture_echo'],
  );
  const status = env.manager.status();
  t.is(status.find((server) => server.name === 'broken')?.state, 'failed');
});

test('bad McpClientManager options are refused naming the field', (t) => {
  t.throws(() => new McpClientManager({ servers: null as never, workspace: '/tmp' }), {
    instanceOf: TypeError,
    message: /^McpClientManager: options\.servers must be/,
  });
  t.throws(() => new McpClientManager({ servers: { x: 'npx' as never }, workspace: '/tmp' }), {
    instanceOf: TypeError,
    message: 'McpClientManager: options.servers.x must be an object',
  });
  t.throws(() => new McpClientManager({ servers: { x: {} }, workspace: '/tmp' }), {
    instanceOf: TypeError,
    message: /^McpClientManager: options\.servers\.x is invalid: exactly one of command \(stdio\) or url/,
  });
  t.throws(() => new McpClientManager({ servers: {}, workspace: 5 as never }), {
    instanceOf: TypeError,
    message: 'McpClientManager: options.workspace must be a string',
  });
});
