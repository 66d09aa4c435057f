import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { integerOption, objectWithMethods, parseOptions } from '../../contracts/parse-options.js';
import { createReadyzHandler, healthzHandler, type ReadinessCheck } from '../health/health-handlers.js';
import { createHostingHttpServer } from '../http/hosting-http-server.js';
import { requestPath, sendJson, type RequestHandler } from '../http/request-handler.js';
import type { HostingMetrics } from './hosting-metrics.js';

const ServeMetricsOptionsSchema = z.strictObject({
  metrics: objectWithMethods<HostingMetrics>('text'),
  /** Loopback unless the operator names another address: the numbers name tenants. */
  host: z.string().min(1).default('127.0.0.1'),
  port: integerOption(0, 9464, 65535),
  /** What /readyz checks; without it /readyz answers like /healthz. */
  ready: z.custom<ReadinessCheck>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  /** True once the server is stopping: /readyz is then 503 (createReadyzHandler's `stopping`). */
  stopping: z.custom<() => boolean>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
});

export type ServeMetricsOptions = z.input<typeof ServeMetricsOptionsSchema>;

export interface RunningMetricsServer {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The operator's listener (`--metrics [HOST:]PORT`): `/metrics` in the
 * Prometheus text format, `/healthz`, and `/readyz` with each check's detail.
 * It binds loopback by default; nothing here is for tenants.
 */
export async function serveMetrics(options: ServeMetricsOptions): Promise<RunningMetricsServer> {
  const parsed = parseOptions(ServeMetricsOptionsSchema, options, 'serveMetrics');
  const readyz = createReadyzHandler({
    check: parsed.ready ?? (async () => ({ ready: true, checks: {} })),
    detail: true,
    ...(parsed.stopping ? { stopping: parsed.stopping } : {}),
  });
  const routes: Record<string, RequestHandler> = { '/metrics': parsed.metrics.handler, '/healthz': healthzHandler, '/readyz': readyz };
  const server = createHostingHttpServer({
    handler: (req, res) => {
      const route = routes[requestPath(req)];
      return route ? route(req, res) : sendJson(res, 404, { error: 'not_found', paths: Object.keys(routes) });
    },
  });
  server.listen(parsed.port, parsed.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  const port = (server.address() as AddressInfo).port;
  const host = parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host;
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

/**
 * `[HOST:]PORT` as `--metrics` takes it: `9464`, `0.0.0.0:9464`, `[::1]:9464`.
 * Throws a RangeError naming the value when it is neither.
 */
export function parseListenAddress(value: string, defaultHost = '127.0.0.1'): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new RangeError(`${value} is not [HOST:]PORT (a port 0-65535, optionally after an address)`);
  return { host: match[1] ? match[1].replace(/^\[|\]$/g, '') : defaultHost, port };
}
