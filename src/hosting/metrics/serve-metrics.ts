import { z } from 'zod';
import { integerOption, objectWithMethods, parseOptions } from '../../contracts/parse-options.js';
import { createReadyzHandler, healthzHandler, type ReadinessCheck } from '../health/health-handlers.js';
import { listenOperator, type OperatorListener } from '../http/operator-listener.js';
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

/** The running listener: its `http://host:port` url, its port, and close(). */
export type RunningMetricsServer = OperatorListener;

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
  // The same hardened listener as the admin API's: its own address, never the tenants' port.
  return listenOperator({
    handler: (req, res) => {
      const route = routes[requestPath(req)];
      return route ? route(req, res) : sendJson(res, 404, { error: 'not_found', paths: Object.keys(routes) });
    },
    host: parsed.host,
    port: parsed.port,
  });
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
