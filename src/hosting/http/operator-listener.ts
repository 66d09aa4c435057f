import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createHostingHttpServer } from './hosting-http-server.js';
import type { RequestHandler } from './request-handler.js';

/** A listener of the operator's own (the admin API): its address, and how to stop it. */
export interface OperatorListener {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `handler` alone on its own address, with the hardened HTTP front's
 * timeouts: for what only the operator may reach (the admin API), so it is
 * never on the port tenants use and never behind the tenants' reverse
 * proxy. The caller picks the address (loopback unless the operator names
 * another). A port that cannot be bound rejects with the listen error.
 */
export async function listenOperator(options: { handler: RequestHandler; host: string; port: number }): Promise<OperatorListener> {
  const server = createHostingHttpServer({ handler: options.handler });
  server.listen(options.port, options.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
