import type { Attributes } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** A metric reader that exports only when a test asks (collect()). */
class OnDemandMetricReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** One recorded measurement: a counter's value, or a histogram's count and sum. */
export interface MetricPoint {
  instrument: string;
  attributes: Attributes;
  value: number | { count: number; sum: number | undefined };
}

/** The real OpenTelemetry SDK (tracer and meter providers) with in-memory exporters, as an app would register it. */
export interface OtelTestSdk {
  tracerProvider: BasicTracerProvider;
  meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  points(): Promise<MetricPoint[]>;
  shutdown(): Promise<void>;
}

export function createOtelTestSdk(): OtelTestSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandMetricReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    async points() {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.flatMap((metric) =>
          metric.dataPoints.map((point): MetricPoint => {
            const value = point.value as number | { count: number; sum?: number };
            return {
              instrument: metric.descriptor.name,
              attributes: point.attributes,
              value: typeof value === 'number' ? value : { count: value.count, sum: value.sum },
            };
          }),
        ),
      );
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** Milliseconds since the epoch of an OpenTelemetry HrTime. */
export function hrTimeMs(time: [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}
