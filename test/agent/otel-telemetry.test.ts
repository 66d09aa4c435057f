/**
 * Tool-call telemetry through the OpenTelemetry API, checked with the real
 * SDK (tracer and meter providers, in-memory exporters), registered the way
 * an app or `node --import` would.
 */
import test from 'ava';
import { metrics, SpanStatusCode, trace } from '@opentelemetry/api';
import { OtelTelemetrySink, METRIC_TOOL_CALL_COUNT, METRIC_TOOL_CALL_LATENCY } from '../../src/telemetry/otel.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { createOtelTestSdk, hrTimeMs } from '../helpers/otel.js';
import { newLog, testRegistry } from './fixtures.js';

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

test('a finished call becomes a span covering its duration, with its decision and outcome', async (t) => {
  const sdk = createOtelTestSdk();
  t.teardown(() => sdk.shutdown());
  const sink = new OtelTelemetrySink({ tracer: sdk.tracerProvider.getTracer('test'), meterProvider: sdk.meterProvider });

  sink.record(event);

  const spans = sdk.spans();
  t.is(spans.length, 1);
  const [span] = spans;
  t.is(span?.name, 'tool_call read_file');
  t.like(span?.attributes ?? {}, {
    'toolcell.tool.name': 'read_file',
    'toolcell.tool.call_id': 'c1',
    'toolcell.tool.decision': 'accept',
    'toolcell.tool.outcome': 'error',
    'toolcell.tool.success': false,
    'toolcell.tool.error_type': 'file_not_found',
  });
  t.is(hrTimeMs(span!.startTime), Date.parse(event.timestamp) - 250);
  t.is(hrTimeMs(span!.endTime), Date.parse(event.timestamp));
  t.deepEqual(span?.status, { code: SpanStatusCode.ERROR, message: 'file_not_found' });
});

test('a finished call adds to the count and latency metrics', async (t) => {
  const sdk = createOtelTestSdk();
  t.teardown(() => sdk.shutdown());
  const sink = new OtelTelemetrySink({ tracer: sdk.tracerProvider.getTracer('test'), meterProvider: sdk.meterProvider });

  sink.record({ ...event, outcome: 'success', errorType: undefined });
  sink.record({ ...event, callId: 'c2', durationMs: 50, outcome: 'success', errorType: undefined });

  const attributes = { function_name: 'read_file', success: true, decision: 'accept' };
  const points = await sdk.points();
  t.deepEqual(
    points.find((p) => p.instrument === METRIC_TOOL_CALL_COUNT),
    { instrument: METRIC_TOOL_CALL_COUNT, attributes, value: 2 },
  );
  t.deepEqual(
    points.find((p) => p.instrument === METRIC_TOOL_CALL_LATENCY),
    { instrument: METRIC_TOOL_CALL_LATENCY, attributes, value: { count: 2, sum: 300 } },
  );
});

test('without a registered SDK the sink is a silent no-op', (t) => {
  const sink = new OtelTelemetrySink();
  t.notThrows(() => sink.record(event));
});

test.serial('through the global API, calls run by the real scheduler are exported', async (t) => {
  // The sink is made before the SDK registers, as in an app that configures telemetry late.
  const sink = new OtelTelemetrySink();
  const sdk = createOtelTestSdk();
  t.true(trace.setGlobalTracerProvider(sdk.tracerProvider));
  t.true(metrics.setGlobalMeterProvider(sdk.meterProvider));
  t.teardown(async () => {
    trace.disable();
    metrics.disable();
    await sdk.shutdown();
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

  t.deepEqual(
    sdk
      .spans()
      .map((s) => s.name)
      .sort(),
    ['tool_call echo', 'tool_call needs_ok'],
  );
  const counts = (await sdk.points()).filter((p) => p.instrument === METRIC_TOOL_CALL_COUNT).map((p) => p.attributes);
  t.deepEqual(
    counts.sort((x, y) => String(x['function_name']).localeCompare(String(y['function_name']))),
    [
      { function_name: 'echo', success: true, decision: 'auto' },
      { function_name: 'needs_ok', success: false, decision: 'denied' },
    ],
  );
});

test('bad OtelTelemetrySink options are refused naming the field', (t) => {
  t.throws(() => new OtelTelemetrySink(null as never), { instanceOf: TypeError, message: 'OtelTelemetrySink: options must be an object' });
  t.throws(() => new OtelTelemetrySink({ tracer: {} as never }), { instanceOf: TypeError, message: 'OtelTelemetrySink: options.tracer must have startSpan()' });
});
