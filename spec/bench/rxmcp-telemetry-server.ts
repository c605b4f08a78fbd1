// The everything server over stdio with telemetry on, for the bench's `telemetry` group: what
// switching it on costs per call, with a real SDK and no network. Spans go through a
// BatchSpanProcessor (as in production) to an exporter that drops them; metrics are recorded into
// a MeterProvider whose reader is never collected. The context manager is AsyncLocalStorage's, as
// the Node SDK registers it (handler-inner spans nest under the request's).
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { stdio } from '../../transports/stdio.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'

/** Takes every batch and drops it: the export's cost without its I/O. */
class DroppingExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: { code: 0 }) => void): void { done({ code: 0 }) }
  async shutdown(): Promise<void> {}
}

/** A reader no one collects: instruments record into the SDK's storage, nothing is exported. */
class IdleReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DroppingExporter())] })
const meterProvider = new MeterProvider({ readers: [new IdleReader()] })
const session = await createEverythingServer({ telemetry: { tracerProvider, meterProvider } }).listen(stdio())
await session.closed
