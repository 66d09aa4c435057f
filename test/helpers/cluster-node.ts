/**
 * Nodes of a toolcell cluster on this machine, for test/hosting/cluster/:
 * the real `toolcell serve --tenants … --etcd …` as child processes, each
 * with its own --node-name, data folder and port, all on one real etcd
 * (etcd.ts), TLS with that etcd's throwaway CA; and an MCP SDK client that
 * trusts the CA. Every node is stopped at teardown (SIGTERM, then SIGKILL),
 * and the disks a killed one left mounted are released.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cliPath } from './cli.js';
import type { TestEtcd } from './etcd.js';
import { freePort } from './free-port.js';
import { releaseLeftDisks } from './hosting-cli.js';
import { withSuiteEngineArgs } from './engine-priority.js';

interface Teardown {
  teardown(fn: () => Promise<void>): void;
}

export interface ClusterNode {
  name: string;
  dataDir: string;
  /** `https://127.0.0.1:PORT/mcp`. */
  url: string;
  port: number;
  stderr(): string;
  /** The tenants file as the node's mirror last wrote it. */
  tenants(): Record<string, { limits?: Record<string, unknown> }>;
  /** Starts it again (same name, folder and port) after a stop. */
  start(): Promise<void>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Sends `signal` and returns (SIGSTOP freezes the node; SIGCONT, or stop(), resumes it). */
  signal(signal: NodeJS.Signals): void;
}

/**
 * A node `name` of the cluster whose etcd is `etcd`, started and serving
 * (announced in etcd) when it resolves. `extra` goes on its command line.
 */
export async function startClusterNode(
  t: Teardown,
  etcd: TestEtcd,
  name: string,
  options: { extra?: string[]; tenants?: string[] } = {},
): Promise<ClusterNode> {
  const extra = options.extra ?? [];
  const dataDir = await mkdtemp(join(tmpdir(), `toolcell-node-${name}-`));
  const port = await freePort();
  const { certs } = etcd;
  let child: ChildProcess | undefined;
  let stderr = '';
  let exited: Promise<unknown> = Promise.resolve();
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    // A frozen node (signal('SIGSTOP')) would not act on SIGTERM.
    running.kill('SIGCONT');
    running.kill(signal);
    const timer = setTimeout(() => running.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  };
  const start = async () => {
    const args = [
      cliPath,
      'serve',
      '--http',
      `127.0.0.1:${port}`,
      '--approval',
      'yolo',
      '--tenants',
      join(dataDir, 'tenants.json'),
      '--data-dir',
      join(dataDir, 'hosting'),
      '--tls-cert',
      certs.cert,
      '--tls-key',
      certs.key,
      ...etcd.flags,
      '--node-name',
      name,
      '--node-url',
      `https://127.0.0.1:${port}`,
      '--drain-seconds',
      '5',
      ...extra,
    ];
    const started = spawn(process.execPath, withSuiteEngineArgs(args), { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    child = started;
    exited = once(started, 'exit');
    started.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const from = stderr.length;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`node ${name} did not serve in 120 s: ${stderr.slice(from)}`)), 120_000);
      const look = () => {
        const served = /over MCP Streamable HTTP at https?:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr.slice(from));
        if (served) {
          if (Number(served[1]) !== port) reject(new Error(`node ${name} listens on ${served[1]}, not ${port}`));
          clearTimeout(timer);
          started.stderr!.off('data', look);
          resolve();
        }
      };
      started.stderr!.on('data', look);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`node ${name} exited: ${stderr.slice(from)}`));
      });
    });
  };
  // Registered first, so it runs after the node's own stop (teardowns run in reverse).
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  releaseLeftDisks(t, join(dataDir, 'hosting'), options.tenants ?? []);
  t.teardown(() => stop());
  await start();
  const tenants = () => {
    try {
      return (JSON.parse(readFileSync(join(dataDir, 'tenants.json'), 'utf8')) as { tenants: Record<string, { limits?: Record<string, unknown> }> }).tenants;
    } catch {
      return {};
    }
  };
  const signal = (which: NodeJS.Signals) => void child?.kill(which);
  return { name, dataDir, url: `https://127.0.0.1:${port}/mcp`, port, stderr: () => stderr, tenants, start, stop, signal };
}

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * An MCP initialize POSTed to `url` as the holder of `bearer` (a key or a
 * token), trusting `caFile`: what opens a session, without the SDK client
 * (whose later requests would go to the same node, where the front would
 * route them by the session id's node).
 */
export function initializeThrough(url: string, bearer: string, caFile: string): Promise<Response> {
  return fetchTrusting(caFile)(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });
}

/** A fetch for the SDK's transport that trusts `caFile` (node:https underneath: Node's own fetch takes no CA). */
export function fetchTrusting(caFile: string): Fetch {
  const ca = readFileSync(caFile);
  return (url, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, key) => (headers[key] = value));
      const outgoing = request(new URL(url), { method: init.method ?? 'GET', headers, ca }, (answer) => {
        const received = new Headers();
        for (const [key, value] of Object.entries(answer.headers)) for (const one of [value ?? []].flat()) received.append(key, one);
        const status = answer.statusCode ?? 502;
        const empty = status === 204 || status === 304 || init.method === 'HEAD';
        if (empty) answer.resume();
        resolve(new Response(empty ? null : (Readable.toWeb(answer) as ReadableStream<Uint8Array>), { status, headers: received }));
      });
      init.signal?.addEventListener('abort', () => outgoing.destroy(new Error('aborted')), { once: true });
      outgoing.on('error', reject);
      outgoing.end(typeof init.body === 'string' ? init.body : undefined);
    });
}

export interface TlsConnection {
  client: Client;
  sessionId: string;
  close(): Promise<void>;
}

/** The MCP SDK client on `url` with `bearer`, trusting the cluster's CA. */
export async function connectOverTls(url: string, bearer: string, caFile: string): Promise<TlsConnection> {
  const client = new Client({ name: 'cluster-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    fetch: fetchTrusting(caFile),
  });
  await client.connect(transport);
  return {
    client,
    sessionId: transport.sessionId!,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}
