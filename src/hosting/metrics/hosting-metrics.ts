import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import type { ServerCpuUsage } from '../admission/server-cpu.js';
import type { HostingEvent, HostingObserver } from '../operations/hosting-events.js';
import { sendMethodNotAllowed, type RequestHandler } from '../http/request-handler.js';

/** A number read when Prometheus scrapes, never cached. */
type Reading = () => number | Promise<number>;
const reading = z.custom<Reading>((value) => typeof value === 'function', { error: 'must be a function' });

/** What a log has written so far (the audit log, the tenants' egress logs), read at scrape time. */
export interface LogVolumeReading {
  lines: number;
  bytes: number;
  /** Events folded into count records rather than written as lines of their own. */
  counted: number;
}
type LogVolumes = () => Record<string, LogVolumeReading>;

const HostingMetricsOptionsSchema = z.strictObject({
  /** Live MCP sessions, server-wide. */
  liveSessions: reading.optional(),
  /** Live sandbox containers, server-wide. */
  liveContainers: reading.optional(),
  /** Calls waiting for admission (fair queue), server-wide. */
  queuedCalls: reading.optional(),
  /** Request-body bytes held now, server-wide (the body budget). */
  bufferedBodyBytes: reading.optional(),
  /** Calls waiting for their tenant's share of the server's shared threads now, server-wide. */
  serverCpuWaiting: reading.optional(),
  /** What each tenant has had of the server's shared threads (admission/server-cpu.ts), as counters. */
  serverCpu: z.custom<() => ServerCpuUsage[]>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  /** Each log's volume by name (`audit`, `egress`): lines, bytes and counted events, as counters. */
  logVolumes: z.custom<LogVolumes>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  /** Also the process's own metrics (RSS, CPU, event-loop lag, GC), prefixed `toolcell_process_`… as prom-client names them. */
  processMetrics: z.boolean().default(true),
  /** In a cluster: this node's name, a `node` label on every series, so that every node's numbers stay apart wherever they are gathered. */
  node: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/, { error: 'must be a node name (letters, digits, dashes)' })
    .optional(),
});

export type HostingMetricsOptions = z.input<typeof HostingMetricsOptionsSchema>;

/** Seconds: a cached `echo` takes a few ms, a build or test run minutes. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * The hosting server's Prometheus metrics, counted from the hosting events
 * (so a counted refusal is always an audited one) plus gauges read at
 * scrape time. Everything lives in a registry of its own, never prom-client's
 * global one, so two servers in one process do not mix their numbers.
 *
 * Series carry tenant names: they are for the operator alone. Serve them
 * only on the metrics listener (`serveMetrics`, loopback by default), never
 * on the port tenants reach.
 */
export class HostingMetrics implements HostingObserver {
  readonly registry = new Registry();
  readonly #calls: Counter<'tenant' | 'outcome'>;
  readonly #latency: Histogram<'tenant'>;
  readonly #refusals: Counter<'tenant' | 'limit'>;
  readonly #authFailures: Counter<'reason'>;
  readonly #sessionsOpened: Counter<'tenant'>;
  readonly #sessionsClosed: Counter<'reason'>;

  constructor(options: HostingMetricsOptions = {}) {
    const parsed = parseOptions(HostingMetricsOptionsSchema, options, 'HostingMetrics');
    if (parsed.node !== undefined) this.registry.setDefaultLabels({ node: parsed.node });
    const registers = [this.registry];
    this.#calls = new Counter({
      name: 'toolcell_tool_calls_total',
      help: 'Tool calls answered, by tenant and outcome',
      labelNames: ['tenant', 'outcome'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'toolcell_tool_call_duration_seconds',
      help: 'Wall time of tool calls, from dispatch to result',
      labelNames: ['tenant'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#refusals = new Counter({
      name: 'toolcell_quota_refusals_total',
      help: 'Requests and calls refused by a limit',
      labelNames: ['tenant', 'limit'],
      registers,
    });
    this.#authFailures = new Counter({
      name: 'toolcell_auth_failures_total',
      help: 'Requests whose credentials were refused',
      labelNames: ['reason'],
      registers,
    });
    this.#sessionsOpened = new Counter({ name: 'toolcell_sessions_opened_total', help: 'MCP sessions opened', labelNames: ['tenant'], registers });
    this.#sessionsClosed = new Counter({ name: 'toolcell_sessions_closed_total', help: 'MCP sessions closed, by reason', labelNames: ['reason'], registers });
    gauge(this.registry, 'toolcell_live_sessions', 'MCP sessions open now', parsed.liveSessions);
    gauge(this.registry, 'toolcell_live_containers', 'Sandbox containers running now', parsed.liveContainers);
    gauge(this.registry, 'toolcell_queued_calls', 'Calls waiting for admission now', parsed.queuedCalls);
    gauge(this.registry, 'toolcell_buffered_body_bytes', 'Request-body bytes held now, all tenants together', parsed.bufferedBodyBytes);
    if (parsed.logVolumes) logVolumeCounters(this.registry, parsed.logVolumes);
    gauge(
      this.registry,
      'toolcell_server_cpu_waiting_calls',
      "Calls waiting for their tenant's share of the server's shared threads now",
      parsed.serverCpuWaiting,
    );
    if (parsed.serverCpu) serverCpuCounters(this.registry, parsed.serverCpu);
    if (parsed.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'toolcell_' });
  }

  /** Counts one event. Synchronous: a metric never delays a call. */
  record(event: HostingEvent): void {
    switch (event.event) {
      case 'tool_call':
        this.#calls.inc({ tenant: event.tenant, outcome: event.outcome });
        this.#latency.observe({ tenant: event.tenant }, event.durationMs / 1000);
        return;
      case 'quota_refusal':
        this.#refusals.inc({ tenant: event.tenant, limit: event.limit });
        return;
      case 'auth_failure':
        this.#authFailures.inc({ reason: event.reason });
        return;
      case 'session_open':
        this.#sessionsOpened.inc({ tenant: event.tenant });
        return;
      case 'session_close':
        this.#sessionsClosed.inc({ reason: event.reason });
        return;
      case 'admin':
      case 'egress':
        return;
    }
  }

  /** The Prometheus text exposition of every metric. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** `GET /metrics`: the text format. Mount it on the operator's listener only. */
  readonly handler: RequestHandler = async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendMethodNotAllowed(res, ['GET', 'HEAD']);
    const { contentType, body } = await this.text();
    res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
  };
}

/**
 * `toolcell_log_lines_total{log}`, `toolcell_log_bytes_total{log}` and
 * `toolcell_log_counted_events_total{log}`, read from the logs at scrape
 * time: how fast each log grows, and how much a flood was folded into count
 * records instead.
 */
function logVolumeCounters(registry: Registry, read: LogVolumes): void {
  const series: Array<[string, string, keyof LogVolumeReading]> = [
    ['toolcell_log_lines_total', 'Lines written, by log', 'lines'],
    ['toolcell_log_bytes_total', 'Bytes written, by log', 'bytes'],
    ['toolcell_log_counted_events_total', 'Events folded into count records instead of lines of their own, by log', 'counted'],
  ];
  for (const [name, help, field] of series) {
    new Counter({
      name,
      help,
      labelNames: ['log'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [log, volume] of Object.entries(read())) this.inc({ log }, volume[field]);
      },
    });
  }
}

/**
 * `toolcell_tenant_server_cpu_seconds_total{tenant}` and
 * `toolcell_tenant_server_cpu_wait_seconds_total{tenant}`, read at scrape
 * time: the CPU the server's shared threads spent on each tenant, and how
 * long its calls waited for that share (a tenant often waiting is one whose
 * `serverCpu` is too small for its work, or one flooding the server).
 */
function serverCpuCounters(registry: Registry, read: () => ServerCpuUsage[]): void {
  const series: Array<[string, string, 'cpuSeconds' | 'waitedSeconds']> = [
    [
      'toolcell_tenant_server_cpu_seconds_total',
      "CPU seconds the server's shared threads and converters (file tools, long commands' parsing, web pages) spent on a tenant's calls",
      'cpuSeconds',
    ],
    [
      'toolcell_tenant_server_cpu_wait_seconds_total',
      "Seconds a tenant's calls waited for their share of the server's shared threads (serverCpu)",
      'waitedSeconds',
    ],
  ];
  for (const [name, help, field] of series) {
    new Counter({
      name,
      help,
      labelNames: ['tenant'],
      registers: [registry],
      collect() {
        this.reset();
        for (const usage of read()) this.inc({ tenant: usage.tenant }, usage[field]);
      },
    });
  }
}

/** A gauge whose value is read at scrape time; without a reading it is left out. */
function gauge(registry: Registry, name: string, help: string, read: Reading | undefined): void {
  if (!read) return;
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      this.set(await read());
    },
  });
}
