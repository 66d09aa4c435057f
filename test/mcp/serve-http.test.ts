import { request } from 'node:http';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixtureStdioSettings, runToolcell, startServeHttp, tempWorkspace, toolResultText, writeWorkspaceSettings } from '../helpers/mcp.js';

const TOKEN = 'test-token-0123456789';

async function serveHttp(t: { teardown: (fn: () => Promise<void>) => void }, args: string[] = []) {
  const workspace = await tempWorkspace('toolcell-serve-http-');
  await writeWorkspaceSettings(workspace.dir, { mcpServers: { fx: fixtureStdioSettings({ includeTools: ['echo', 'slow', 'stats'] }) } });
  const server = await startServeHttp({ workspace: workspace.dir, args: ['--http', '127.0.0.1:0', '--approval', 'yolo', '--trust-workspace', ...args] });
  t.teardown(async () => {
    await server.stop();
    await workspace.cleanup();
  });
  return server;
}

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'toolcell-test-client', version: '1.0.0' });
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A raw POST with chosen headers (fetch would not let a test set Host). */
function rawPost(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('over HTTP: list, call, progress and cancellation', async (t) => {
  const server = await serveHttp(t);
  t.regex(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const client = await connect(server.url);
  t.teardown(() => client.close());
  const { tools } = await client.listTools();
  t.true(tools.some((tool) => tool.name === 'mcp_fx_echo'));
  t.is(toolResultText(await client.callTool({ name: 'mcp_fx_echo', arguments: { text: 'via http' } })), 'via http');

  const messages: string[] = [];
  await client.callTool({ name: 'mcp_fx_slow', arguments: { ms: 800 } }, undefined, { onprogress: (p) => messages.push(p.message ?? '') });
  t.true(messages.length >= 1);
  t.regex(messages[0] ?? '', /^step \d+\/16$/);

  const controller = new AbortController();
  let progressed = 0;
  const running = client.callTool({ name: 'mcp_fx_slow', arguments: { ms: 60_000 } }, undefined, {
    signal: controller.signal,
    onprogress: () => {
      progressed++;
    },
  });
  while (progressed === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort('cancelled by test');
  await t.throwsAsync(running);
  let cancelled = 0;
  for (let i = 0; i < 100 && cancelled === 0; i++) {
    cancelled = JSON.parse(toolResultText(await client.callTool({ name: 'mcp_fx_stats', arguments: {} }))).cancelled;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.is(cancelled, 1);
});

test('with --token, a missing or wrong bearer token gets 401 and the right one works', async (t) => {
  const server = await serveHttp(t, ['--token', TOKEN]);
  const missing = await rawPost(server.url, {});
  t.is(missing.status, 401);
  t.regex(missing.body, /Missing bearer token/);
  const wrong = await rawPost(server.url, { Authorization: 'Bearer nope-nope-nope' });
  t.is(wrong.status, 401);
  await t.throwsAsync(connect(server.url, 'nope-nope-nope'));
  const client = await connect(server.url, TOKEN);
  t.teardown(() => client.close());
  t.is(toolResultText(await client.callTool({ name: 'mcp_fx_echo', arguments: { text: 'authorised' } })), 'authorised');
});

test('a foreign Host or Origin is refused (DNS rebinding)', async (t) => {
  const server = await serveHttp(t);
  const port = new URL(server.url).port;
  const evilHost = await rawPost(server.url, { Host: `evil.example:${port}` });
  t.is(evilHost.status, 403);
  t.regex(evilHost.body, /Invalid Host header/);
  const evilOrigin = await rawPost(server.url, { Origin: 'http://evil.example' });
  t.is(evilOrigin.status, 403);
  t.regex(evilOrigin.body, /Invalid Origin header/);
  const sameOrigin = await rawPost(server.url, { Origin: `http://localhost:${port}`, Host: `localhost:${port}` });
  t.is(sameOrigin.status, 200);
});

test('requests without a session must initialize; unknown sessions are 404; other paths 404', async (t) => {
  const server = await serveHttp(t);
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(response.status, 400);
  const unknown = await fetch(server.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': 'nope' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(unknown.status, 404);
  t.is((await fetch(server.url.replace('/mcp', '/other'))).status, 404);
});

test('a body with more JSON values than a tool call needs, or nested deeper, is refused before it is parsed, with or without a session', async (t) => {
  const server = await serveHttp(t);
  const client = await connect(server.url);
  t.teardown(() => client.close());
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
  const call = (junk: unknown) => ({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'mcp_fx_echo', arguments: { text: 'x', junk } } });
  const bodies = [
    JSON.stringify(call(Array.from({ length: 100_000 }, () => ({})))),
    JSON.stringify(call('@')).replace('"@"', '['.repeat(100) + ']'.repeat(100)),
  ];
  for (const body of bodies) {
    for (const session of [{}, { 'Mcp-Session-Id': sessionId }] as Array<Record<string, string>>) {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...session },
        body,
      });
      t.is(response.status, 400);
      t.regex(await response.text(), /Parse error: the body must be JSON of at most 4 MB, 50000 values and 64 levels of nesting/);
    }
  }
  t.is(toolResultText(await client.callTool({ name: 'mcp_fx_echo', arguments: { text: 'still here' } })), 'still here');
});

test('a request whose id is still being answered in its session is refused; the first keeps its answer, and the id is free again once it has it', async (t) => {
  const server = await serveHttp(t);
  const client = await connect(server.url);
  t.teardown(() => client.close());
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
  const send = (id: string | number, ms: number) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'mcp_fx_slow', arguments: { ms } } }),
    });
  // The SDK sends the event stream's headers at once: the first request is being answered from here on.
  const first = await send('same', 1500);
  t.is(first.status, 200);
  const second = await send('same', 10);
  t.is(second.status, 400);
  // Its error has no id: the client's running request with that id must not read it as its own answer.
  const refusal = (await second.json()) as { error: { code: number; message: string }; id: unknown };
  t.is(refusal.id, null);
  t.is(refusal.error.code, -32600);
  t.regex(refusal.error.message, /^Invalid Request: a request with id "same" is still being answered in this session/);
  // 7 and "7" are different ids, as they are to the SDK.
  const numbered = await send(7, 10);
  const stringed = await send('7', 10);
  t.deepEqual([numbered.status, stringed.status], [200, 200]);
  await Promise.all([numbered.text(), stringed.text()]);
  t.regex(await first.text(), /"id":"same"/);
  const again = await send('same', 10);
  t.is(again.status, 200);
  t.regex(await again.text(), /"result".*"id":"same"/s);
});

test('binding a non-loopback address without a token is refused', async (t) => {
  const workspace = await tempWorkspace();
  t.teardown(workspace.cleanup);
  const result = await runToolcell(['serve', '--http', '0.0.0.0:0', '--workspace', workspace.dir], { env: { TOOLCELL_SERVE_TOKEN: '' } });
  t.is(result.code, 2);
  t.regex(result.stderr, /requires a bearer token \(--token/);
});

test('serve needs exactly one transport', async (t) => {
  const workspace = await tempWorkspace();
  t.teardown(workspace.cleanup);
  const result = await runToolcell(['serve', '--workspace', workspace.dir]);
  t.is(result.code, 2);
  t.regex(result.stderr, /exactly one of --stdio or --http/);
  const bad = await runToolcell(['serve', '--http', 'localhost:99999', '--workspace', workspace.dir]);
  t.is(bad.code, 2);
});
