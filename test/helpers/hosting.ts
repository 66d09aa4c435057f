/**
 * Shared machinery of the hosting tests: tenants made with the real
 * `toolcell tenant` commands, a HostingServer on a free port with an
 * observer that keeps every event, and the MCP SDK's own client signed in
 * with a tenant's key.
 */
import type { ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { LABELS } from '../../src/backends/docker/labels.js';
import { ApiKeyAuthenticator } from '../../src/hosting/auth/api-key.js';
import type { HostingEvent, HostingObserver } from '../../src/hosting/operations/hosting-events.js';
import { HostingServer, type HostingServerOptions } from '../../src/hosting/server/hosting-server.js';
import type { Authenticator } from '../../src/hosting/auth/principal.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import type { PolicyRuleInput } from '../../src/policy/policy-rule.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/runtime.js';
import { packageRoot } from '../../src/paths.js';
import { testSandboxRuntime } from './test-runtime.js';
import { runCli } from './cli.js';

/** A fresh real-path folder, removed at teardown (containers may still hold files a moment; retried). */
export async function hostingFolder(t: ExecutionContext | { teardown(fn: () => Promise<void>): void }, prefix = 'toolcell-hosting-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  t.teardown(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  return dir;
}

/** `toolcell tenant add NAME --tenants FILE …`; returns the key after checking it is stdout's only line. */
export async function addTenant(file: string, name: string, extra: string[] = []): Promise<string> {
  const result = await runCli(['tenant', 'add', name, '--tenants', file, ...extra]);
  if (result.code !== 0) throw new Error(`toolcell tenant add ${name} exited ${result.code}: ${result.stderr}`);
  const lines = result.stdout.split('\n');
  if (lines.length !== 2 || lines[1] !== '' || !/^tc_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/.test(lines[0]!))
    throw new Error(`unexpected stdout: ${JSON.stringify(result.stdout)}`);
  return lines[0]!;
}

/** An observer that keeps every event, and lets a test wait for one. */
export class RecordingObserver implements HostingObserver {
  readonly events: HostingEvent[] = [];
  readonly #waiters: Array<{ match: (event: HostingEvent) => boolean; resolve: (event: HostingEvent) => void }> = [];

  /** When set, `record` returns its promise for the events it returns one for: the server must wait for it. */
  hold: ((event: HostingEvent) => Promise<void> | undefined) | undefined;

  record(event: HostingEvent): void | Promise<void> {
    this.events.push(event);
    const held = this.hold?.(event);
    for (const waiter of [...this.#waiters]) {
      if (!waiter.match(event)) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
    return held;
  }

  /** Resolves with the first event (past or future) that matches; rejects after `timeoutMs`. */
  waitFor(match: (event: HostingEvent) => boolean, timeoutMs = 30_000): Promise<HostingEvent> {
    const past = this.events.find(match);
    if (past) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no matching hosting event in time')), timeoutMs);
      this.#waiters.push({
        match,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      });
    });
  }
}

export interface Hosting {
  server: HostingServer;
  store: TenantStore;
  runtime: Runtime;
  observer: RecordingObserver;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * Starts a hosting server over `tenantsFile` on 127.0.0.1 and a free port (approval yolo: shell commands run, in Docker).
 * API keys are checked, and whatever `moreAuthenticators` makes from the store (an OIDC authenticator).
 * `pool` sets the runtime's worker pool (its threads, extra tool modules); `policy` the operator's rules.
 */
export async function startHosting(
  options: {
    tenantsFile: string;
    dataDir: string;
    moreAuthenticators?: (store: TenantStore) => Authenticator[];
    pool?: RuntimeOptions['pool'];
    policy?: PolicyRuleInput[];
  } & Partial<HostingServerOptions>,
): Promise<Hosting> {
  const { tenantsFile, moreAuthenticators, pool, policy, ...rest } = options;
  await mkdir(options.dataDir, { recursive: true });
  // The data dir as the CLI gives it: a tenant's own workspace that meets the default ones is refused.
  const store = await TenantStore.open({ file: tenantsFile, pollMs: 200, dataDir: options.dataDir });
  const runtime = await createRuntime({
    workspace: options.dataDir,
    approvalMode: 'yolo',
    sandbox: 'docker',
    ...testSandboxRuntime(),
    onWarning: () => {},
    ...(pool ? { pool } : {}),
    ...(policy ? { policy } : {}),
  });
  const observer = new RecordingObserver();
  const server = await HostingServer.start({
    store,
    runtime,
    authenticators: [new ApiKeyAuthenticator(store), ...(moreAuthenticators?.(store) ?? [])],
    observer,
    port: 0,
    sweepIntervalMs: 100,
    ...rest,
  });
  let closed: Promise<void> | undefined;
  return {
    server,
    store,
    runtime,
    observer,
    dataDir: options.dataDir,
    close: () =>
      (closed ??= (async () => {
        await server.close();
        store.close();
        await runtime.close();
      })()),
  };
}

export interface Connection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  sessionId: string;
  /** Ends the MCP session (DELETE, so the server frees its slot and container at once) and closes the client. */
  close(): Promise<void>;
}

/** The SDK client connected as the holder of `key`. */
export async function connectAs(url: string, key: string): Promise<Connection> {
  const client = new Client({ name: 'hosting-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return {
    client,
    transport,
    sessionId: transport.sessionId!,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** A tool call's text, and its error type when it failed. */
export async function call(client: Client, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<{ text: string; errorType?: string }> {
  const result = (await client.callTool({ name, arguments: args }, undefined, signal ? { signal } : {})) as CallToolResult;
  const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
  return result.isError ? { text, errorType: String(result._meta?.['toolcell/errorType']) } : { text };
}

/** A raw JSON-RPC POST to the MCP endpoint, as a client without the SDK would send it. */
export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * The request line and headers of a POST to /mcp, for a raw socket: a client
 * that controls when (or whether) it sends its body and reads its answer.
 */
export function rawMcpPostHead(options: { port: number; key: string; contentLength: number; sessionId?: string }): string {
  const { port, key, contentLength, sessionId } = options;
  return [
    'POST /mcp HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    ...(sessionId !== undefined ? [`Mcp-Session-Id: ${sessionId}`] : []),
    `Content-Length: ${contentLength}`,
    '',
    '',
  ].join('\r\n');
}

/** A tools/list request, the smallest call a session answers; its id is unique, so it never shares a stream with the SDK client's own requests. */
export function listToolsMessage(): Record<string, unknown> {
  return { jsonrpc: '2.0', id: `probe-${randomUUID()}`, method: 'tools/list', params: {} };
}

/** Ends `connection` at teardown (DELETE, then the client); errors of a session the server already closed are ignored. */
export async function connectTenant(t: { teardown(fn: () => Promise<void>): void }, url: string, key: string): Promise<Connection> {
  const connection = await connectAs(url, key);
  t.teardown(() => connection.close().catch(() => {}));
  return connection;
}

/**
 * Toolcell's sandbox containers (running or not) whose workspace is `dir` or
 * lies under it: a test's data dir names its own containers and no other helper's on
 * a shared engine. Ids in full.
 */
export async function toolcellContainersUnder(dir: string): Promise<string[]> {
  const list = await createEngineClient().listContainers({ all: true, filters: { label: [`${LABELS.sandbox}=1`] } });
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const under = (workspace: string) => workspace === dir || workspace.startsWith(prefix);
  return list.filter((info) => under(info.Labels?.[LABELS.workspace] ?? '')).map((info) => info.Id);
}

/** The running toolcell containers whose workspace is under `dir` (none created but not yet started, none stopped). */
export async function runningContainersUnder(dir: string): Promise<string[]> {
  const running = new Set((await createEngineClient().listContainers({ filters: { label: [`${LABELS.sandbox}=1`] } })).map((info) => info.Id));
  return (await toolcellContainersUnder(dir)).filter((id) => running.has(id));
}

/**
 * A client that leaves without ending its session, as the MCP Inspector's
 * CLI does: another process connects with the SDK client as the holder of
 * `key`, lists the tools, and exits without a DELETE. Resolves with the id
 * of the session it left behind.
 */
export function leaveWithoutClosing(url: string, key: string): Promise<string> {
  const sdk = (path: string) => JSON.stringify(join(packageRoot, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', path));
  const script = `
    import { Client } from ${sdk('client/index.js')};
    import { StreamableHTTPClientTransport } from ${sdk('client/streamableHttp.js')};
    const transport = new StreamableHTTPClientTransport(new URL(process.argv[1]), { requestInit: { headers: { Authorization: 'Bearer ' + process.argv[2] } } });
    const client = new Client({ name: 'leaver', version: '1.0.0' });
    await client.connect(transport);
    await client.listTools();
    process.stdout.write(transport.sessionId + '\\n');
    process.exit(0);
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script, url, key], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`the leaving client failed: ${String(error)} ${stderr}`));
      else resolve(stdout.trim());
    });
  });
}
