import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ToolServerOptions } from './create-tool-server.js';
import { createToolServer } from './create-tool-server.js';
import type { ServeSessionFactory } from './session.js';

export interface ServeStdioOptions {
  createSession: ServeSessionFactory;
  createScheduler: ToolServerOptions['createScheduler'];
  stdin?: Readable;
  stdout?: Writable;
  /** Stops serving (e.g. on SIGTERM). */
  signal?: AbortSignal;
}

/**
 * Serves one MCP session over stdin/stdout until the client closes stdin or
 * `signal` fires; then in-flight calls are aborted and the session (its
 * sandbox included) is closed before this resolves. Nothing else may write
 * to stdout meanwhile: it carries the protocol.
 */
export async function serveStdio(options: ServeStdioOptions): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const session = await options.createSession('stdio');
  try {
    const server = createToolServer({
      registry: session.registry,
      ...(session.scheduler ? { scheduler: session.scheduler } : {}),
      createScheduler: options.createScheduler,
    });
    const closed = new Promise<void>((resolve) => {
      server.onclose = () => resolve();
    });
    const stop = (): void => {
      void server.close();
    };
    stdin.once('end', stop);
    stdin.once('close', stop);
    options.signal?.addEventListener('abort', stop, { once: true });
    await server.connect(new StdioServerTransport(stdin, stdout));
    if (options.signal?.aborted || stdin.readableEnded) stop();
    await closed;
    stdin.off('end', stop);
    stdin.off('close', stop);
    options.signal?.removeEventListener('abort', stop);
  } finally {
    await session.close();
  }
}
