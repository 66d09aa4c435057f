import test from 'ava';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveHttp } from '../../src/mcp/server/serve-http.js';
import { createSessionFactory } from '../../src/runtime/mcp-session-factory.js';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createLocalTool } from '../../src/tools/defined-tool.js';

/**
 * serveHttp's session handling with real HTTP and the SDK client. The
 * per-session tool `whoami` stands for the tools bound to a session's own
 * sandbox (run_shell_command, discovered tools).
 */
const workspace = { roots: ['/tmp'], stateDir: '/tmp/.toolcell' };

function sessionTool(sessionId: string, aborted: string[], waiting: string[]) {
  return createLocalTool(
    defineTool({
      name: 'whoami',
      description: 'Names the session whose sandbox runs this tool; waits for abort when asked to.',
      kind: 'read',
      parameters: z.object({ wait: z.boolean().optional() }),
      async execute({ wait }, { signal }) {
        if (wait) {
          waiting.push(sessionId);
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          aborted.push(sessionId);
        }
        return { llmContent: sessionId, returnDisplay: sessionId };
      },
    }),
    { workspace },
  );
}

async function start(
  t: { teardown: (fn: () => Promise<void>) => void },
  options: { maxSessions?: number; sessionIdleMs?: number; sessionIdPrefix?: string } = {},
) {
  const opened: string[] = [];
  const closed: string[] = [];
  const aborted: string[] = [];
  const waiting: string[] = [];
  const base = new ToolRegistry();
  base.register(
    createLocalTool(
      defineTool({
        name: 'shared',
        description: 'A shared tool.',
        kind: 'read',
        parameters: z.object({}),
        execute: async () => ({ llmContent: 'shared', returnDisplay: 'shared' }),
      }),
      { workspace },
    ),
  );
  const server = await serveHttp({
    port: 0,
    ...options,
    createScheduler: ({ registry, onOutput }) => new Scheduler({ registry, approvalMode: 'default', onOutput }),
    createSession: createSessionFactory({
      baseRegistry: base,
      openSandbox: async (sessionId) => {
        opened.push(sessionId);
        return { tools: [sessionTool(sessionId, aborted, waiting)], close: async () => void closed.push(sessionId) };
      },
    }),
  });
  t.teardown(() => server.close());
  return { server, opened, closed, aborted, waiting };
}

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'session-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? '';

test('each MCP session gets its own sandbox session, closed when the client ends the session', async (t) => {
  const { server, opened, closed } = await start(t);
  const a = await connect(server.url);
  const b = await connect(server.url);
  t.is(opened.length, 2);
  t.not(opened[0], opened[1]);
  t.is(text(await a.client.callTool({ name: 'whoami', arguments: {} })), a.transport.sessionId ?? 'none');
  t.is(text(await b.client.callTool({ name: 'whoami', arguments: {} })), b.transport.sessionId ?? 'none');
  t.is(text(await b.client.callTool({ name: 'shared', arguments: {} })), 'shared');
  t.is(server.sessionCount, 2);

  await a.transport.terminateSession();
  await a.client.close();
  for (let i = 0; i < 1500 && closed.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(closed, [opened[0]]);
  t.is(server.sessionCount, 1);
  await b.client.close();
});

test('sessions over the limit are refused', async (t) => {
  const { server } = await start(t, { maxSessions: 1 });
  const a = await connect(server.url);
  t.teardown(() => a.client.close());
  const error = await t.throwsAsync(connect(server.url));
  t.regex(error?.message ?? '', /Too many sessions/);
});

test('idle sessions are closed', async (t) => {
  // Generous: on a loaded machine the client's initialize and initialized may be seconds apart.
  const { server, closed } = await start(t, { sessionIdleMs: 4000 });
  const a = await connect(server.url);
  t.teardown(() => a.client.close());
  for (let i = 0; i < 1000 && closed.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.is(closed.length, 1);
  t.is(server.sessionCount, 0);
});

/** A call that waits until aborted, with a request timeout far past the test's: only an answer from the server ends it in time. */
function callThatWaits(client: Client): Promise<unknown> {
  return client.callTool({ name: 'whoami', arguments: { wait: true } }, undefined, { timeout: 600_000 }).catch((error: unknown) => error);
}

async function untilWaiting(waiting: string[]): Promise<void> {
  for (let i = 0; i < 500 && waiting.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
}

test('closing the server aborts in-flight calls, tells their clients why at once, and closes every session', async (t) => {
  const { server, opened, closed, aborted, waiting } = await start(t);
  const a = await connect(server.url);
  t.teardown(() => a.client.close());
  const pending = callThatWaits(a.client);
  await untilWaiting(waiting);
  t.is(waiting.length, 1);
  await server.close();
  t.deepEqual(aborted, opened);
  t.deepEqual(closed, opened);
  // Without an answer the client would wait out its request timeout (here ten minutes, past the test's own).
  const error = (await pending) as { code?: number; message?: string; data?: { type?: string } };
  t.is(error.code, -32001);
  t.is(error.data?.type, 'session_ended');
  t.regex(error.message ?? '', /The session was closed because the server is shutting down: this request was stopped/);
});

test('an operator closing a session with a running call answers that call with the reason, and other sessions go on', async (t) => {
  const { server, opened, closed, aborted, waiting } = await start(t);
  const a = await connect(server.url);
  const b = await connect(server.url);
  t.teardown(() => Promise.all([a.client.close(), b.client.close()]).then(() => undefined));
  const pending = callThatWaits(a.client);
  await untilWaiting(waiting);
  t.true(await server.closeSession(a.transport.sessionId ?? '', 'admin'));
  const error = (await pending) as { code?: number; message?: string; data?: { type?: string } };
  t.is(error.code, -32001);
  t.is(error.data?.type, 'session_ended');
  t.regex(error.message ?? '', /The session was closed by an operator: this request was stopped/);
  t.deepEqual(aborted, [opened[0]]);
  t.deepEqual(closed, [opened[0]]);
  t.is(text(await b.client.callTool({ name: 'whoami', arguments: {} })), b.transport.sessionId ?? 'none');
});

test('a session with a running call is not idle', async (t) => {
  // Idle time long enough that a loaded machine's pause between initialize and the first call is not idleness.
  const { server, closed, waiting } = await start(t, { sessionIdleMs: 2000 });
  const a = await connect(server.url);
  t.teardown(() => a.client.close());
  const controller = new AbortController();
  const pending = a.client
    .callTool({ name: 'whoami', arguments: { wait: true } }, undefined, { signal: controller.signal, timeout: 60_000 })
    .catch(() => 'cancelled');
  for (let i = 0; i < 500 && waiting.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 5000));
  t.deepEqual(closed, []);
  controller.abort();
  await pending;
});

test('sessionIdPrefix starts every session id (a cluster node names its sessions so the front keeps them there)', async (t) => {
  const { server, opened } = await start(t, { sessionIdPrefix: 'n1.' });
  const { client, transport } = await connect(server.url);
  t.teardown(() => client.close());
  t.regex(transport.sessionId ?? '', /^n1\.[0-9a-f-]{36}$/);
  t.deepEqual(opened, [transport.sessionId]);
});

test('bad serveHttp options are refused naming the field, before anything listens', async (t) => {
  const base = {
    createSession: () => Promise.reject(new Error('never called')),
    createScheduler: ({ registry }: { registry: ToolRegistry }) => new Scheduler({ registry }),
  };
  await t.throwsAsync(serveHttp({ ...base, port: 70000 }), { instanceOf: RangeError, message: 'serveHttp: options.port must be at most 65535' });
  await t.throwsAsync(serveHttp({ ...base, port: 0, token: 'short' }), {
    instanceOf: TypeError,
    message: /^serveHttp: options\.token must be at least 8 printable/,
  });
  await t.throwsAsync(serveHttp({ ...base, port: 0, token: 'test-token-0123456789', authenticate: () => Promise.resolve({ caller: 'x' }) }), {
    instanceOf: TypeError,
    message: 'serveHttp: options.authenticate must not be given with options.token (they exclude each other)',
  });
  await t.throwsAsync(serveHttp({ ...base, port: 0, maxSesions: 2 } as never), {
    instanceOf: TypeError,
    message: 'serveHttp: options.maxSesions is not a known option',
  });
  await t.throwsAsync(serveHttp({ ...base, port: 0, sessionIdPrefix: 'a b' }), {
    instanceOf: TypeError,
    message: /^serveHttp: options\.sessionIdPrefix must be letters, digits, dots and dashes/,
  });
});
