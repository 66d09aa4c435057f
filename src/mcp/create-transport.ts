import { resolve } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerSettings } from '../config/settings-schema.js';
import { fetchWithOwnSignal } from './fetch-own-signal.js';
import { expandVariables, serverEnvironment } from './server-environment.js';

/** A transport plus what it can tell about a dead server. */
export interface ClientTransport {
  transport: Transport;
  /** `stdio` or `http`, for `mcp list`. */
  kind: 'stdio' | 'http';
  /** The last lines a stdio server wrote to stderr (empty for HTTP). */
  stderrTail(): string;
}

const STDERR_TAIL_CHARS = 2000;

/**
 * Builds the client transport for one server's settings: stdio (a child
 * process with a sanitised environment, cwd relative to the workspace,
 * stderr captured for error messages) or Streamable HTTP (`url` with
 * `headers`, whose values may name host variables as `$NAME`).
 */
export function createClientTransport(settings: McpServerSettings, options: { workspace: string }): ClientTransport {
  if (settings.command !== undefined) {
    const transport = new StdioClientTransport({
      command: settings.command,
      args: settings.args ?? [],
      env: serverEnvironment(settings.env),
      cwd: resolve(options.workspace, settings.cwd ?? '.'),
      stderr: 'pipe',
    });
    let tail = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    return { transport, kind: 'stdio', stderrTail: () => tail.trim() };
  }
  const url = settings.url ?? settings.httpUrl;
  if (url === undefined) throw new TypeError('createClientTransport: settings need a command or a url');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings.headers ?? {})) headers[name] = expandVariables(value);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: fetchWithOwnSignal(),
    // A dead server should fail the call now, not after minutes of SSE reconnection attempts.
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
  return { transport, kind: 'http', stderrTail: () => '' };
}
