import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { McpServerSettings } from '../../src/config/settings-schema.js';
import { packageRoot } from '../../src/paths.js';

/** The compiled MCP fixture server (test/fixtures/mcp/fixture-server.ts). */
export const fixtureServerPath = join(packageRoot, 'dist', 'test', 'fixtures', 'mcp', 'fixture-server.js');
/** The compiled toolcell CLI. */
export const toolcellBin = join(packageRoot, 'dist', 'src', 'cli', 'bin.js');

/** Settings for the fixture as a stdio server. */
export function fixtureStdioSettings(extra: Partial<McpServerSettings> = {}): McpServerSettings {
  return { command: process.execPath, args: [fixtureServerPath], ...extra };
}

export interface RunningProcess {
  child: ChildProcess;
  /** Ends the process (SIGKILL after 2 s) and waits for it. */
  stop(): Promise<void>;
}

/** A running fixture over Streamable HTTP at `url`. */
export interface FixtureHttpServer extends RunningProcess {
  url: string;
  port: number;
}

/** Starts the fixture over HTTP on 127.0.0.1 (a free port unless `port` is given). */
export async function startFixtureHttpServer(options: { port?: number; env?: Record<string, string> } = {}): Promise<FixtureHttpServer> {
  const child = spawn(process.execPath, [fixtureServerPath, '--http'], {
    env: { ...process.env, ...options.env, ...(options.port ? { FIXTURE_PORT: String(options.port) } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await waitForLine(child, /^listening (\d+)$/);
  return { child, port: Number(port), url: `http://127.0.0.1:${port}/mcp`, stop: () => stopProcess(child) };
}

/** Resolves with the first capture group of the first stdout line matching `pattern`. */
export function waitForLine(child: ChildProcess, pattern: RegExp, stream: 'stdout' | 'stderr' = 'stdout'): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const source = stream === 'stdout' ? child.stdout : child.stderr;
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString('utf8');
      for (const line of buffer.split('\n')) {
        const match = pattern.exec(line.trim());
        if (match) {
          source?.off('data', onData);
          resolve(match[1] ?? match[0]);
          return;
        }
      }
    };
    source?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before printing ${pattern}; output: ${buffer}`)));
  });
}

/** SIGTERM, then SIGKILL after 2 s; resolves when the process is gone. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(timer);
}

/** A fresh, real-path temporary folder; `cleanup` removes it. */
export async function tempWorkspace(prefix = 'toolcell-mcp-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 5 }) };
}

/** True when a process with this pid is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Writes `<dir>/.toolcell/settings.json`. */
export async function writeWorkspaceSettings(dir: string, settings: unknown): Promise<void> {
  await mkdir(join(dir, '.toolcell'), { recursive: true });
  await writeFile(join(dir, '.toolcell', 'settings.json'), JSON.stringify(settings, null, 2));
}

/** The SDK's own client, connected to `toolcell serve --stdio` started as a process. */
export async function connectServeStdio(options: {
  workspace: string;
  args?: string[];
}): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [toolcellBin, 'serve', '--stdio', '--workspace', options.workspace, ...(options.args ?? [])],
    env: { ...(process.env as Record<string, string>) },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'toolcell-test-client', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** `toolcell serve --http` started as a process; resolves once it prints its URL. */
export async function startServeHttp(options: {
  workspace: string;
  args?: string[];
  env?: Record<string, string>;
}): Promise<RunningProcess & { url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [toolcellBin, 'serve', '--workspace', options.workspace, ...(options.args ?? ['--http', '127.0.0.1:0'])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const url = await waitForLine(child, /MCP over Streamable HTTP at (\S+)/, 'stderr');
  return { child, url, stderr: () => stderr, stop: () => stopProcess(child) };
}

/** Runs the toolcell CLI to completion. */
export function runToolcell(
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [toolcellBin, ...args], { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** The text blocks of an MCP tool result, joined by newlines. */
export function toolResultText(result: unknown): string {
  const content = ((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>;
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
}

/** A temporary workspace for `toolcell serve` whose live updates come every 100 ms; removed at teardown. */
export async function serveWorkspace(t: { teardown: (fn: () => Promise<void>) => void }, prefix: string): Promise<string> {
  const ws = await tempWorkspace(prefix);
  await writeWorkspaceSettings(ws.dir, { shell: { liveUpdateIntervalMs: 100 } });
  t.teardown(ws.cleanup);
  return ws.dir;
}
