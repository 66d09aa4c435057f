/**
 * A Unix-socket proxy in front of the real Docker engine that can hold back
 * one kind of request, so a test can act while toolcell is, say, halfway
 * through starting a container: point `DOCKER_HOST=unix://<socketPath>` at
 * it, wait for `held`, do what the test is about, then `release()`.
 *
 * It forwards bytes both ways (hijacked attach streams included) and reads
 * only the request line at the start of each chunk a client sends: HTTP/1.1
 * clients send a request only after the previous answer, so a request starts
 * a chunk; bodies and attach streams do not start with a method and a path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DockerProxy {
  /** The socket to point DOCKER_HOST at (`unix://` + this). */
  readonly socketPath: string;
  /** Request lines seen, in order (`POST /v1.41/containers/create?name=…`), held ones included. */
  readonly requests: string[];
  /** Resolves with the request line of the first request matching `hold`, once it is held. */
  readonly held: Promise<string>;
  /** Lets held requests (and any later ones) through. */
  release(): void;
  close(): Promise<void>;
}

const REQUEST_LINE = /^(GET|POST|PUT|DELETE|HEAD) (\S+) HTTP\/1\.[01]$/;

/** The request line a chunk starts with (`POST /containers/create?…`), if it starts one. */
function requestLine(chunk: Buffer): string | undefined {
  const end = chunk.indexOf('\r\n');
  // A create request carries the whole container spec in its query string: the line can be long.
  const match = end > 0 ? REQUEST_LINE.exec(chunk.subarray(0, end).toString('latin1')) : null;
  return match ? `${match[1]} ${match[2]}` : undefined;
}

export async function startDockerProxy(options: { hold: RegExp; engineSocket?: string }): Promise<DockerProxy> {
  const engineSocket =
    options.engineSocket ?? (process.env['DOCKER_HOST']?.startsWith('unix://') ? process.env['DOCKER_HOST'].slice(7) : '/var/run/docker.sock');
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-docker-proxy-'));
  const socketPath = join(dir, 'docker.sock');
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const waiting: Array<() => void> = [];
  let released = false;
  let onHeld: (line: string) => void = () => {};
  const held = new Promise<string>((resolve) => (onHeld = resolve));

  const server = createServer((client) => {
    const engine = createConnection(engineSocket);
    sockets.add(client).add(engine);
    for (const socket of [client, engine]) socket.on('close', () => sockets.delete(socket));
    client.on('error', () => engine.destroy());
    engine.on('error', () => client.destroy());
    engine.pipe(client);
    // Client bytes go through one queue, so a held request keeps what follows it behind it too.
    let queue = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      const line = requestLine(chunk);
      if (line !== undefined) requests.push(line);
      if (!released && line !== undefined && options.hold.test(line)) {
        client.pause();
        queue = queue.then(
          () =>
            new Promise<void>((resolve) => {
              waiting.push(resolve);
              onHeld(line);
            }),
        );
      }
      queue = queue.then(() => {
        engine.write(chunk);
        client.resume();
      });
    });
    client.on('end', () => void queue.then(() => engine.end()));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, resolve));

  const release = (): void => {
    released = true;
    for (const resolve of waiting.splice(0)) resolve();
  };
  return {
    socketPath,
    requests,
    held,
    release,
    async close() {
      release();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
