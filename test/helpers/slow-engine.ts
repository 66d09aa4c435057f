/**
 * The real Docker engine behind a unix socket that holds every connection
 * made in its first `holdMs` until that time has passed: an engine that is
 * there but slow to answer, as dockerd is on a loaded host or while it
 * starts. `holdMs: Infinity` never answers (a hung engine).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SlowEngine {
  socketPath: string;
  close(): Promise<void>;
}

export async function slowEngine(options: { holdMs: number; engineSocket?: string }): Promise<SlowEngine> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-slow-engine-'));
  const socketPath = join(dir, 'docker.sock');
  const engineSocket = options.engineSocket ?? '/var/run/docker.sock';
  const until = Date.now() + options.holdMs;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const pass = (): void => {
      if (client.destroyed) return;
      const engine = connect(engineSocket);
      sockets.add(engine);
      engine.on('close', () => sockets.delete(engine));
      engine.on('error', () => client.destroy());
      client.on('close', () => engine.destroy());
      client.pipe(engine).pipe(client);
      client.resume();
    };
    if (!Number.isFinite(until)) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        pass();
      },
      Math.max(0, until - Date.now()),
    );
    timers.add(timer);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, resolve));
  return {
    socketPath,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
