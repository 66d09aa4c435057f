/**
 * A `fetch` for the cluster's probes over node:https, so that a client can
 * check a certificate against a CA of its own and a name of its own: the
 * front's (the operator's CA, the node's address) and a node's server
 * directly (the cluster's CA, `toolcell-server`, which names no address).
 * Connections are kept alive, as the global fetch keeps them, so that a
 * figure through the front and one to a node directly pay alike.
 */
import { Agent, request } from 'node:https';
import { Readable } from 'node:stream';

export interface TlsTarget {
  /** PEM of the CA the server's certificate must chain to. */
  ca: Buffer;
  /** The name to check on the certificate (SNI too); default the URL's host. */
  servername?: string;
}

export function tlsFetch(target: TlsTarget): typeof fetch {
  const agent = new Agent({ keepAlive: true, ca: target.ca, ...(target.servername !== undefined ? { servername: target.servername } : {}) });
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
      const req = request(
        url,
        {
          method: init?.method ?? 'GET',
          headers,
          agent,
          ...(target.servername !== undefined ? { servername: target.servername } : {}),
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const one of Array.isArray(value) ? value : [value]) answerHeaders.append(name, one);
          }
          const empty = [101, 204, 205, 304].includes(status) || init?.method === 'HEAD';
          if (empty) res.resume();
          resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: answerHeaders }));
        },
      );
      const signal = init?.signal;
      if (signal) {
        if (signal.aborted) req.destroy(new Error('aborted'));
        signal.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
      }
      req.on('error', reject);
      req.end(init?.body === undefined || init.body === null ? undefined : String(init.body));
    });
}
