import test from 'ava';
import {
  type Attributes,
  createNoopMeter,
  INVALID_SPAN_CONTEXT,
  type Meter,
  type MeterProvider,
  metrics,
  type Span,
  type SpanOptions,
  type SpanStatus,
  trace,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { OtelTelemetrySink, METRIC_TOOL_CALL_COUNT, METRIC_TOOL_CALL_LATENCY } from '../../src/telemetry/otel.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { newLog, testRegistry } from './fixtures.js';

/** In-memory stand-ins for an OpenTelemetry SDK: they record what the API was asked to export. */
interface RecordedSpan {
  name: string;
  options: SpanOptions;
  status?: SpanStatus;
  ended: boolean;
  endTime?: unknown;
}

function recordingTracer(spans: RecordedSpan[]): Tracer {
  const startSpan = (name: string, options: SpanOptions = {}): Span => {
    const record: RecordedSpan = { name, options, ended: false };
    spans.push(record);
    const span: Span = {
      spanContext: () => INVALID_SPAN_CONTEXT,
      setAttribute: () => span,
      setAttributes: () => span,
      addEvent: () => span,
      addLink: () => span,
      addLinks: () => span,
      setStatus: (status) => ((record.status = status), span),
      updateName: () => span,
      end: (endTime) => void Object.assign(record, { ended: true, endTime }),
      isRecording: () => true,
      recordException: () => {},
    };
    return span;
  };
  return { startSpan, startActiveSpan: (() => undefined) as unknown as Tracer['startActiveSpan'] };
}

function recordingMeterProvider(points: Array<{ instrument: string; value: number; attributes?: Attributes }>): MeterProvider {
  const meter: Meter = {
    ...createNoopMeter(),
    createCounter: (name) => ({ add: (value, attributes) => void points.push({ instrument: name, value, ...(attributes ? { attributes } : {}) }) }),
    createHistogram: (name) => ({ record: (value, attributes) => void points.push({ instrument: name, value, ...(attributes ? { attributes } : {}) }) }),
  };
  return { getMeter: () => meter };
}

const event = {
  event: 'tool_call' as const,
  timestamp: '2025-01-01T00:00:10.000Z',
  callId: 'c1',
  tool: 'read_file',
  durationMs: 250,
  decision: 'accept' as const,
  outcome: 'error' as const,
  errorType: 'file_not_found',
};

test('a finished call becomes a span covering its duration, with its decision and outcome', (t) => {
  const spans: RecordedSpan[] = [];
  const sink = new OtelTelemetrySink({ tracer: recordingTracer(spans), meterProvider: recordingMeterProvider([]) });

  sink.record(event);

  t.is(spans.length, 1);
  const [span] = spans;
  t.is(span?.name, 'tool_call read_file');
  t.like(span?.options.attributes ?? {}, {
    'toolcell.tool.name': 'read_file',
    'toolcell.tool.call_id': 'c1',
    'toolcell.tool.decision': 'accept',
    'toolcell.tool.outcome': 'error',
    'toolcell.tool.success': false,
    'toolcell.tool.error_type': 'file_not_found',
  });
  t.is(span?.options.startTime, Date.parse(event.timestamp) - 250);
  t.is(span?.endTime, Date.parse(event.timestamp));
  t.is(span?.status?.message, 'file_not_found');
  t.true(span?.ended);
});

test('a finished call adds to the count and latency metrics', (t) => {
  const points: Array<{ instrument: string; value: number; attributes?: Attributes }> = [];
  const sink = new OtelTelemetrySink({ tracer: recordingTracer([]), meterProvider: recordingMeterProvider(points) });

  sink.record({ ...event, outcome: 'success', errorType: undefined });

  const attributes = { function_name: 'read_file', success: true, decision: 'accept' };
  t.deepEqual(points, [
    { instrument: METRIC_TOOL_CALL_COUNT, value: 1, attributes },
    { instrument: METRIC_TOOL_CALL_LATENCY, value: 250, attributes },
  ]);
});

test('without a registered SDK the sink is a silent no-op', (t) => {
  const sink = new OtelTelemetrySink();
  t.notThrows(() => sink.record(event));
});

test.serial('through the global API, calls run by the real scheduler are exported', async (t) => {
  const spans: RecordedSpan[] = [];
  const points: Array<{ instrument: string; value: number; attributes?: Attributes }> = [];
  // The sink is made before the SDK registers, as in an app that configures telemetry late.
  const sink = new OtelTelemetrySink();
  const tracerProvider: TracerProvider = { getTracer: () => recordingTracer(spans) };
  t.true(trace.setGlobalTracerProvider(tracerProvider));
  t.true(metrics.setGlobalMeterProvider(recordingMeterProvider(points)));
  t.teardown(() => {
    trace.disable();
    metrics.disable();
  });
  const registry = testRegistry(newLog());
  const scheduler = new Scheduler({ registry, telemetry: sink });

  await scheduler.schedule(
    [
      { callId: 'a', name: 'echo', args: { text: 'hi' } },
      { callId: 'b', name: 'needs_ok', args: {} },
    ],
    new AbortController().signal,
  );

  t.deepEqual(spans.map((s) => s.name).sort(), ['tool_call echo', 'tool_call needs_ok']);
  const counts = points.filter((p) => p.instrument === METRIC_TOOL_CALL_COUNT).map((p) => p.attributes);
  t.deepEqual(
    counts.sort((x, y) => String(x?.function_name).localeCompare(String(y?.function_name))),
    [
      { function_name: 'echo', success: true, decision: 'auto' },
      { function_name: 'needs_ok', success: false, decision: 'denied' },
    ],
  );
});
