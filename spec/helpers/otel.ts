import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics'
import { afterAll, beforeAll } from 'vitest'
import { arrivals } from './arrivals.ts'

/** A metric reader read on demand: `collect()` when the test asks, no timer. */
class OnDemandReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** One side's OpenTelemetry SDK, in memory: what it ended (spans) and what it measured (metrics, read when asked). */
export interface InMemoryOtel {
  readonly tracerProvider: BasicTracerProvider
  readonly meterProvider: MeterProvider
  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[]
  /** The one ended span named `name`; throws when there is none or more than one. */
  span(name: string): ReadableSpan
  /** Resolves with the ended spans named `name` once there are `count` of them (default 1). */
  ended(name: string, count?: number): Promise<ReadableSpan[]>
  /** The metrics as of now, by instrument name. */
  metrics(): Promise<Map<string, MetricData>>
  /** The data points of one instrument as of now (none when it recorded nothing). */
  points(name: string): Promise<Array<DataPoint<number | Histogram>>>
}

/** A tracer and a meter provider that keep what they record in memory. */
export function inMemoryOtel(): InMemoryOtel {
  const exporter = new InMemorySpanExporter()
  // Every span as it ends, so a test can wait for one.
  const ends = arrivals<ReadableSpan>()
  const heard: SpanProcessor = { onStart() {}, onEnd: span => ends.push(span), forceFlush: async () => {}, shutdown: async () => {} }
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), heard] })
  const reader = new OnDemandReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const spans = () => exporter.getFinishedSpans()
  const metrics = async () => {
    const { resourceMetrics } = await reader.collect()
    const all = new Map<string, MetricData>()
    for (const scope of resourceMetrics.scopeMetrics) for (const metric of scope.metrics) all.set(metric.descriptor.name, metric)
    return all
  }
  return {
    tracerProvider,
    meterProvider,
    spans,
    span(name) {
      const found = spans().filter(span => span.name === name)
      if (found.length !== 1) throw new Error(`${found.length} spans named ${name}: ${spans().map(span => span.name).join(', ')}`)
      return found[0]!
    },
    async ended(name, count = 1) {
      const named = () => ends.items.filter(span => span.name === name)
      while (named().length < count) await ends.atLeast(ends.items.length + 1)
      return named()
    },
    metrics,
    async points(name) {
      return ((await metrics()).get(name)?.dataPoints ?? []) as Array<DataPoint<number | Histogram>>
    },
  }
}

/**
 * Makes AsyncLocalStorage the global context manager for the file's tests (else a span started
 * inside a handler does not nest under the request's), and puts the no-op one back after.
 */
export function asyncContextForFile(): void {
  let manager: AsyncLocalStorageContextManager | undefined
  beforeAll(() => {
    manager = new AsyncLocalStorageContextManager().enable()
    context.setGlobalContextManager(manager)
  })
  afterAll(() => {
    manager?.disable()
    context.disable()
  })
}
