/**
 * Issue 25, in process: `createHost(config, { telemetry })` traces every server's client, and a
 * gateway's call runs its downstream request inside the SERVER span of the call it serves, so
 * client -> gateway -> server is one trace (the CLIENT span of the host's client is the child of the
 * gateway's SERVER span). The end-to-end version over real processes is
 * spec/interop/telemetry-e2e.spec.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { context, SpanKind } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createHost } from '../../host/host.ts'
import { hostServer } from '../../host/gateway.ts'
import { parseHostConfig } from '../../lib/host-config.ts'
import { connect } from '../../actors/client.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })
// Without a context manager the handler's span is not current inside it, and nothing nests.
beforeAll(() => { context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()) })
afterAll(() => { context.disable() })

describe('the gateway with telemetry', () => {
  it.each(['modern', 'legacy'] as const)('continues the caller\'s trace to the server behind it (%s era): client -> gateway SERVER -> host CLIENT -> server SERVER', async era => {
    const exporter = new InMemorySpanExporter()
    const telemetry = { tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) }
    const host = createHost(parseHostConfig({ mcpServers: { everything: { command: 'unused' } } }), {
      telemetry,
      start: async (_config, options) => {
        const [near, far] = createMemoryPair()
        const server = createEverythingServer({ telemetry })
        await server.listen(far)
        cleanup.push(() => server.close())
        return { client: await connect(near, { name: 'host', version: '1' }, options) }
      },
    })
    cleanup.push(() => host.close())
    await firstValueFrom(host.states.pipe(filter(states => states.get('everything')?.status === 'ready')))
    const gateway = hostServer(host, { server: { telemetry } })
    cleanup.push(() => gateway.close())
    const [near, far] = createMemoryPair()
    await gateway.server.listen(far)
    const client = await connect(near, { name: 'caller', version: '1' }, { era, telemetry })
    cleanup.push(() => client.close())
    await client.callTool('everything__echo', { text: 'hi' })

    const spans = exporter.getFinishedSpans()
    const find = (name: string, kind: SpanKind) => spans.filter(span => span.name === name && span.kind === kind)
    const [caller] = find('tools/call everything__echo', SpanKind.CLIENT)
    const [gatewayServer] = find('tools/call everything__echo', SpanKind.SERVER)
    const [hostClient] = find('tools/call echo', SpanKind.CLIENT)
    const [server] = find('tools/call echo', SpanKind.SERVER)
    expect([caller, gatewayServer, hostClient, server].every(span => span !== undefined)).toBe(true)
    const traceId = caller!.spanContext().traceId
    expect(gatewayServer!.parentSpanContext?.spanId).toBe(caller!.spanContext().spanId)
    expect(hostClient!.parentSpanContext?.spanId).toBe(gatewayServer!.spanContext().spanId)
    expect(server!.parentSpanContext?.spanId).toBe(hostClient!.spanContext().spanId)
    expect(new Set([gatewayServer, hostClient, server].map(span => span!.spanContext().traceId))).toEqual(new Set([traceId]))
  }, 30_000)
})
