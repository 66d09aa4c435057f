import { type Attributes, type Counter, type Histogram, type MeterProvider, metrics, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { z } from 'zod';
import { objectWithMethods, parseOptions } from '../contracts/parse-options.js';
import { VERSION } from '../version.js';
import type { TelemetrySink, ToolCallEvent } from './events.js';

/** Metric names; stable, like the gemini-cli ones they mirror (`gemini_cli.tool.call.*`). */
export const METRIC_TOOL_CALL_COUNT = 'toolcell.tool.call.count';
export const METRIC_TOOL_CALL_LATENCY = 'toolcell.tool.call.latency';
/** Span name prefix: spans are called `tool_call <tool name>`. */
export const SPAN_TOOL_CALL = 'tool_call';

const SCOPE = 'toolcell';

const otelTelemetrySinkOptionsSchema = z.strictObject({
  /** Defaults to the global tracer provider's `toolcell` tracer. */
  tracer: objectWithMethods<Tracer>('startSpan').optional(),
  /** Defaults to the global meter provider, looked up at each record (it may be registered later). */
  meterProvider: objectWithMethods<MeterProvider>('getMeter').optional(),
});

export type OtelTelemetrySinkOptions = z.input<typeof otelTelemetrySinkOptionsSchema>;

/**
 * A TelemetrySink that reports each finished tool call through the
 * OpenTelemetry API: a `tool_call <name>` span covering the call's execution
 * (attributes: name, call id, decision, outcome, success, error type,
 * duration, and the wait for the person's answer when there was one) and two
 * metrics, a call counter and a latency histogram (execution time in ms, never
 * the wait for an answer), both with
 * `function_name`, `success` and `decision` attributes.
 *
 * Nothing is exported unless the host process registered an OpenTelemetry
 * SDK (tracer/meter provider with an exporter): without one, the API is a
 * no-op and this sink costs almost nothing.
 */
export class OtelTelemetrySink implements TelemetrySink {
  readonly #tracer: Tracer;
  readonly #meterProvider: MeterProvider | undefined;
  #instruments: { provider: MeterProvider; count: Counter; latency: Histogram } | undefined;

  constructor(raw: OtelTelemetrySinkOptions = {}) {
    const options = parseOptions(otelTelemetrySinkOptionsSchema, raw, 'OtelTelemetrySink');
    this.#tracer = options.tracer ?? trace.getTracer(SCOPE, VERSION);
    this.#meterProvider = options.meterProvider;
  }

  record(event: ToolCallEvent): void {
    try {
      this.#span(event);
      this.#metrics(event);
    } catch {
      // Telemetry must never disturb a tool call.
    }
  }

  #span(event: ToolCallEvent): void {
    const end = Date.parse(event.timestamp);
    const endTime = Number.isFinite(end) ? end : Date.now();
    const attributes: Attributes = {
      'toolcell.tool.name': event.tool,
      'toolcell.tool.call_id': event.callId,
      'toolcell.tool.decision': event.decision,
      'toolcell.tool.outcome': event.outcome,
      'toolcell.tool.success': event.outcome === 'success',
      'toolcell.tool.duration_ms': event.durationMs,
      ...(event.approvalWaitMs !== undefined ? { 'toolcell.tool.approval_wait_ms': event.approvalWaitMs } : {}),
      ...(event.errorType ? { 'toolcell.tool.error_type': event.errorType } : {}),
    };
    const span = this.#tracer.startSpan(`${SPAN_TOOL_CALL} ${event.tool}`, {
      kind: SpanKind.INTERNAL,
      startTime: endTime - Math.max(0, event.durationMs),
      attributes,
    });
    if (event.outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: event.errorType ?? 'error' });
    else if (event.outcome === 'success') span.setStatus({ code: SpanStatusCode.OK });
    span.end(endTime);
  }

  #metrics(event: ToolCallEvent): void {
    const provider = this.#meterProvider ?? metrics.getMeterProvider();
    // A global meter provider may be registered after this sink was made: follow it.
    if (this.#instruments?.provider !== provider) {
      const meter = provider.getMeter(SCOPE, VERSION);
      this.#instruments = {
        provider,
        count: meter.createCounter(METRIC_TOOL_CALL_COUNT, { description: 'Tool calls finished, by tool, success and decision.' }),
        latency: meter.createHistogram(METRIC_TOOL_CALL_LATENCY, { description: 'Tool call execution time (without the wait for approval).', unit: 'ms' }),
      };
    }
    const attributes: Attributes = { function_name: event.tool, success: event.outcome === 'success', decision: event.decision };
    this.#instruments.count.add(1, attributes);
    this.#instruments.latency.record(event.durationMs, attributes);
  }
}
