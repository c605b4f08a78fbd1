import { describe, expect, it } from 'vitest'
import { MeterProvider, MetricReader, type GaugeMetricData } from '@opentelemetry/sdk-metrics'
import { createServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { createMemoryEventStore } from '../../transports/event-store.ts'
import { redisEventStore } from '../../transports/redis-event-store.ts'

/** A reader that collects when the test asks, and exports nowhere. */
class OnDemandReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The gauge's one value at a collection, or undefined when the gauge is not there. */
async function gauge(reader: MetricReader, name: string): Promise<number | undefined> {
  const { resourceMetrics, errors } = await reader.collect()
  expect(errors).toEqual([])
  for (const scope of resourceMetrics.scopeMetrics) {
    const metric = scope.metrics.find(metric => metric.descriptor.name === name) as GaugeMetricData | undefined
    if (metric !== undefined) {
      expect(metric.dataPoints).toHaveLength(1)
      return metric.dataPoints[0]!.value
    }
  }
  return undefined
}

describe('issue 25: the gauge of SSE events stored (rxmcp.sse.events.stored)', () => {
  it('reports the events the listener\'s memory store holds at each collection: while a call streams, and after it', async () => {
    const reader = new OnDemandReader()
    const meterProvider = new MeterProvider({ readers: [reader] })
    const store = createMemoryEventStore()
    let release!: () => void
    const released = new Promise<void>(resolve => { release = resolve })
    let sentTwo!: () => void
    const twoSent = new Promise<void>(resolve => { sentTwo = resolve })
    const server = createServer({ name: 'gauged', version: '1' }, { telemetry: { meterProvider } })
    server.tool('steps', {}, async (_args, ctx) => {
      ctx.progress(1, 3)
      ctx.progress(2, 3)
      sentTwo()
      await released
      return { content: [{ type: 'text', text: 'done' }] }
    })
    const http = streamableHttp({ eventStore: store })
    await server.listen(http)
    const client = await connect(streamableHttpClient(http.url!), { name: 'c', version: '1' }, { era: 'legacy' })
    try {
      const progress: number[] = []
      const called = client.callTool('steps', {}, { onProgress: event => progress.push(event.progress) })
      await twoSent
      // The call's stream is open and holds its two progress notifications (the standalone GET
      // stream may hold none); the gauge reads the store's own count.
      const during = await gauge(reader, 'rxmcp.sse.events.stored')
      expect(store.stats().events).toBeGreaterThanOrEqual(2)
      expect(during).toBe(store.stats().events)
      release()
      expect((await called).content).toEqual([{ type: 'text', text: 'done' }])
      expect(progress).toEqual([1, 2])
      // The stream read to its end is forgotten: the gauge follows the store down.
      const after = await gauge(reader, 'rxmcp.sse.events.stored')
      expect(after).toBe(store.stats().events)
      expect(after).toBeLessThan(during!)
    } finally {
      await client.close()
      await server.close()
      await http.close()
      await meterProvider.shutdown()
    }
  })

  it('reports one gauge for a server on two listeners: the sum of what their stores hold', async () => {
    const reader = new OnDemandReader()
    const meterProvider = new MeterProvider({ readers: [reader] })
    const first = createMemoryEventStore()
    const second = createMemoryEventStore()
    // Events stored directly: the gauge reads the stores, whatever put the events there.
    for (let i = 0; i < 3; i++) first.storeEvent('a', { jsonrpc: '2.0', method: 'notifications/message', params: { data: i } }, { sessionId: 'A' })
    for (let i = 0; i < 5; i++) second.storeEvent('b', { jsonrpc: '2.0', method: 'notifications/message', params: { data: i } }, { sessionId: 'B' })
    const server = createServer({ name: 'two', version: '1' }, { telemetry: { meterProvider } })
    const one = streamableHttp({ eventStore: first })
    const two = streamableHttp({ eventStore: second })
    await server.listen(one)
    await server.listen(two)
    try {
      expect(await gauge(reader, 'rxmcp.sse.events.stored')).toBe(8)
      second.deleteStream!('b')
      expect(await gauge(reader, 'rxmcp.sse.events.stored')).toBe(3)
    } finally {
      await server.close()
      await one.close()
      await two.close()
      await meterProvider.shutdown()
    }
  })

  it('is not reported for a store that cannot count cheaply (Redis), nor without a store', async () => {
    // Redis's store has no eventCount, and a listener without a store has nothing to count.
    expect(redisEventStore({} as never).eventCount).toBeUndefined()
    const storeless = streamableHttp({ eventStore: false })
    expect(storeless.gauges?.()).toEqual([])
    await storeless.close()
    const reader = new OnDemandReader()
    const meterProvider = new MeterProvider({ readers: [reader] })
    const server = createServer({ name: 'no-store', version: '1' }, { telemetry: { meterProvider } })
    const bare = streamableHttp({ eventStore: false })
    await server.listen(bare)
    try {
      expect(await gauge(reader, 'rxmcp.sse.events.stored')).toBeUndefined()
    } finally {
      await server.close()
      await bare.close()
      await meterProvider.shutdown()
    }
  })
})
