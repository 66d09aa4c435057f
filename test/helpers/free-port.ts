import { once } from 'node:events';
import { createServer } from 'node:net';

/** A loopback TCP port free now (the caller's server binds it next). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}
