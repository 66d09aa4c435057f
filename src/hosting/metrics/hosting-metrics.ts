import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import type { TenantCpuWeight } from '../admission/tenant-cpu-weights.js';
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
  /** Each tenant's CPU weight in the sandboxes and its recent use (admission/tenant-cpu-weights.ts), as gauges. */
  tenantCpuWeights: z.custom<() => TenantCpuWeight[]>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
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
    if (parsed.tenantCpuWeights) tenantCpuWeightGauges(this.registry, parsed.tenantCpuWeights);
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
  scrapedSeries<LogVolumeReading>(
    registry,
    Counter,
    'log',
    [
      ['toolcell_log_lines_total', 'Lines written, by log', 'lines'],
      ['toolcell_log_bytes_total', 'Bytes written, by log', 'bytes'],
      ['toolcell_log_counted_events_total', 'Events folded into count records instead of lines of their own, by log', 'counted'],
    ],
    () => Object.entries(read()),
  );
}

/**
 * `toolcell_tenant_server_cpu_seconds_total{tenant}` and
 * `toolcell_tenant_server_cpu_wait_seconds_total{tenant}`, read at scrape
 * time: the CPU the server's shared threads spent on each tenant, and how
 * long its calls waited for that share (a tenant often waiting is one whose
 * `serverCpu` is too small for its work, or one flooding the server).
 */
function serverCpuCounters(registry: Registry, read: () => ServerCpuUsage[]): void {
  scrapedSeries<ServerCpuUsage>(
    registry,
    Counter,
    'tenant',
    [
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
    ],
    () => read().map((usage) => [usage.tenant, usage]),
  );
}

/**
 * `toolcell_tenant_cpu_weight{tenant}` and `toolcell_tenant_cpu_recent_use{tenant}`,
 * read at scrape time: each tenant with sessions, its weight in the sandboxes'
 * CPUs (1 the default, lower for a tenant that kept them busy) and the part
 * of them it used of late.
 */
function tenantCpuWeightGauges(registry: Registry, read: () => TenantCpuWeight[]): void {
  scrapedSeries<TenantCpuWeight>(
    registry,
    Gauge,
    'tenant',
    [
      [
        'toolcell_tenant_cpu_weight',
        "A tenant's weight in the sandboxes' CPUs under contention, 1 the kernel's default (lower after it kept them busy)",
        'weight',
      ],
      ['toolcell_tenant_cpu_recent_use', "The part of the sandboxes' CPUs a tenant used of late (fading by half every 2 s)", 'recentUse'],
    ],
    () => read().map((weight) => [weight.tenant, weight]),
  );
}

/** The numeric fields of a reading. */
type NumberField<R> = { [K in keyof R]: R[K] extends number ? K : never }[keyof R];

/**
 * Series read at scrape time, one per `[name, help, field]`: counters or
 * gauges of one label, whose values are that field of each labelled
 * reading `read` returns then (a label no longer read is left out).
 */
function scrapedSeries<R>(
  registry: Registry,
  Metric: typeof Counter | typeof Gauge,
  label: string,
  series: Array<[name: string, help: string, field: NumberField<R>]>,
  read: () => Array<[string, R]>,
): void {
  for (const [name, help, field] of series) {
    new Metric({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      collect(this: Counter | Gauge) {
        this.reset();
        for (const [value, reading] of read()) {
          const number = reading[field] as number;
          if (this instanceof Counter) this.inc({ [label]: value }, number);
          else this.set({ [label]: value }, number);
        }
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
