import test from 'ava';
import { getEventListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createClientTransport } from '../../src/mcp/create-transport.js';
import { McpClientManager } from '../../src/mcp/mcp-client-manager.js';
import type { McpTool } from '../../src/mcp/mcp-tool.js';
import { startFixtureHttpServer, tempWorkspace } from '../helpers/mcp.js';

async function discoverHttp(url: string, extra: { headers?: Record<string, string>; timeout?: number } = {}) {
  const workspace = await tempWorkspace();
  const manager = new McpClientManager({ servers: { web: { url, ...extra } }, workspace: workspace.dir });
  const result = await manager.discover();
  const tool = (name: string): McpTool => {
    const found = result.tools.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no tool ${name}; problems: ${result.problems.join('; ')}`);
    return found;
  };
  return {
    manager,
    ...result,
    tool,
    close: async () => {
      await manager.close();
      await workspace.cleanup();
    },
  };
}

const run = (tool: McpTool, args: Record<string, unknown> = {}, signal = new AbortController().signal, updates?: string[]) =>
  tool.execute(args, signal, updates ? (output) => updates.push(String(output)) : undefined);

test('tools of a Streamable HTTP server are listed and called', async (t) => {
  const server = await startFixtureHttpServer();
  t.teardown(server.stop);
  const env = await discoverHttp(server.url);
  t.teardown(env.close);
  t.deepEqual(env.problems, []);
  t.is((await run(env.tool('mcp_web_echo'), { text: 'over http' })).llmContent, 'over http');
  const image = await run(env.tool('mcp_web_image'));
  t.is((image.llmContent as Array<{ inlineData?: { mimeType?: string } }>)[1]?.inlineData?.mimeType, 'image/png');
  t.is((await run(env.tool('mcp_web_fail'))).error?.type, 'mcp_tool_error');
  t.deepEqual(env.manager.status()[0], {
    name: 'web',
    transport: 'http',
    target: server.url,
    state: 'connected',
    trusted: false,
    tools: env.manager.status()[0]!.tools,
  });
});

test('headers are sent, with $NAME taken from the host environment', async (t) => {
  const server = await startFixtureHttpServer({ env: { FIXTURE_KEY: 'k-123' } });
  t.teardown(server.stop);
  process.env['TOOLCELL_TEST_FIXTURE_KEY'] = 'k-123';
  t.teardown(() => delete process.env['TOOLCELL_TEST_FIXTURE_KEY']);
  const good = await discoverHttp(server.url, { headers: { 'X-Fixture-Key': '$TOOLCELL_TEST_FIXTURE_KEY' } });
  t.teardown(good.close);
  t.deepEqual(good.problems, []);
  const bad = await discoverHttp(server.url, { headers: { 'X-Fixture-Key': 'wrong' } });
  t.teardown(bad.close);
  t.is(bad.tools.length, 0);
  t.regex(bad.problems[0] ?? '', /MCP server "web" could not connect.*bad key/);
});

test('progress and cancellation work over HTTP', async (t) => {
  const server = await startFixtureHttpServer();
  t.teardown(server.stop);
  const env = await discoverHttp(server.url);
  t.teardown(env.close);
  const controller = new AbortController();
  const updates: string[] = [];
  const running = run(env.tool('mcp_web_slow'), { ms: 60_000 }, controller.signal, updates);
  while (updates.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort();
  t.is((await running).error?.type, 'cancelled');
  let stats = { cancelled: 0 };
  for (let i = 0; i < 50 && stats.cancelled === 0; i++) {
    stats = JSON.parse(String((await run(env.tool('mcp_web_stats'))).llmContent));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.is(stats.cancelled, 1);
});

test('a dead HTTP server fails calls clearly; a restarted one is reconnected on the next call', async (t) => {
  const first = await startFixtureHttpServer();
  const env = await discoverHttp(first.url);
  t.teardown(env.close);
  const firstPid = Number((await run(env.tool('mcp_web_pid'))).llmContent);
  await first.stop();

  const failed = await run(env.tool('mcp_web_pid'));
  t.is(failed.error?.type, 'mcp_tool_error');
  t.regex(failed.error?.message ?? '', /MCP server "web" .*reconnected on the next call/);
  t.not(env.manager.status()[0]?.state, 'connected');

  const second = await startFixtureHttpServer({ port: first.port });
  t.teardown(second.stop);
  const again = await run(env.tool('mcp_web_pid'));
  t.is(again.error, undefined);
  t.is(Number(again.llmContent), second.child.pid ?? -1);
  t.not(Number(again.llmContent), firstPid);
});

test("a long-lived HTTP client's calls leave no abort listener each on its transport's signal", async (t) => {
  const server = await startFixtureHttpServer();
  t.teardown(server.stop);
  const workspace = await tempWorkspace();
  t.teardown(workspace.cleanup);
  const { transport } = createClientTransport({ url: server.url }, { workspace: workspace.dir });
  const client = new Client({ name: 'listener-count', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  for (let i = 0; i < 150; i++) await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
  // The SDK's own field: the one signal it hands every request (Node's fetch kept a listener a request on it until GC).
  const signal = (transport as unknown as { _abortController?: AbortController })._abortController?.signal;
  t.truthy(signal, "the SDK's transport still keeps its signal there");
  t.true(getEventListeners(signal!, 'abort').length <= 2, `listeners: ${getEventListeners(signal!, 'abort').length}`);
});
