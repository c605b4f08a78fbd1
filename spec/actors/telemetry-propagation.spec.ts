import { describe, expect, it } from 'vitest'
import { SpanKind } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { connect } from '../../actors/client.ts'
import { createConnection, type IncomingRequest } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { asyncContextForFile, inMemoryOtel, type InMemoryOtel } from '../helpers/otel.ts'
import { CLIENT_INFO, CLIENT_OPTIONS, LEGACY, MODERN, expectChildOf, startPair, telemetryServer, traceparentOf, type Era, type Wiring } from '../helpers/otel-pair.ts'
import { cleanupsAfterEach } from '../helpers/cleanups.ts'
import { events, messages } from '../helpers/sse-events.ts'

asyncContextForFile()
const { cleanups, unhandled } = cleanupsAfterEach()

const ACCEPT = 'application/json, text/event-stream'
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_ID = '00f067aa0ba902b7'
const TRACE = { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: 'vendor=opaque,other=x', baggage: 'user.id=42,tenant=acme%20co;ttl=3' }

/** A telemetry server on a Streamable HTTP listener, spoken to with plain fetch. */
async function rawServer(): Promise<{ url: string; s: InMemoryOtel }> {
  const s = inMemoryOtel()
  const { server } = telemetryServer(s, unhandled)
  cleanups.push(() => server.close())
  const http = streamableHttp()
  await server.listen(http)
  return { url: http.url!, s }
}

function post(url: string, body: JsonObject, headers: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(body) })
}

/** A modern-era tools/call over plain fetch, `_meta` carrying `trace`; resolves with the tool's text. */
async function modernCall(url: string, tool: string, trace: JsonObject): Promise<string> {
  const meta = { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: CLIENT_INFO, ...trace }
  const response = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, _meta: meta } },
    { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': tool })
  const body = await response.json() as { result: { content: Array<{ text: string }> } }
  return body.result.content[0]!.text
}

/** A legacy session's tools/call over plain fetch (initialize first), `_meta` carrying `trace`; resolves with the tool's text. */
async function legacyCall(url: string, tool: string, trace: JsonObject): Promise<string> {
  const init = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: CLIENT_INFO } }, {})
  const session = init.headers.get('mcp-session-id')!
  await events(init)
  const headers = { 'mcp-session-id': session, 'mcp-protocol-version': LEGACY }
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)
  const response = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, _meta: trace } }, headers)
  const [answer] = messages(await events(response)) as Array<{ result: { content: Array<{ text: string }> } }>
  return answer!.result.content[0]!.text
}

/** The JSON a tool answered as its one text content. */
function textJson(result: { content: unknown[] }): JsonObject {
  return JSON.parse((result.content[0] as { text: string }).text) as JsonObject
}

const CALLS = { modern: modernCall, legacy: legacyCall } as const

function serverSpan(s: InMemoryOtel, tool: string): ReadableSpan {
  const found = s.spans().filter(span => span.name === `tools/call ${tool}` && span.kind === SpanKind.SERVER)
  expect(found).toHaveLength(1)
  return found[0]!
}

describe('telemetry propagation from a caller that is not rxmcp', () => {
  for (const era of ['modern', 'legacy'] as const) {
    it(`continues the trace in _meta (${era} era): parent, tracestate, baggage for the handler`, async () => {
      const { url, s } = await rawServer()
      expect(JSON.parse(await CALLS[era](url, 'baggage', TRACE))).toEqual({ 'user.id': '42', tenant: 'acme co' })
      const span = serverSpan(s, 'baggage')
      expect(span.spanContext().traceId).toBe(TRACE_ID)
      expect(span.parentSpanContext).toMatchObject({ traceId: TRACE_ID, spanId: PARENT_ID, isRemote: true })
      expect(span.spanContext().traceState?.serialize()).toBe('vendor=opaque,other=x')
    })

    it.each([
      ['wrong length', `00-${TRACE_ID}-${PARENT_ID.slice(1)}-01`],
      ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
      ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
      ['version ff', `ff-${TRACE_ID}-${PARENT_ID}-01`],
      ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`],
    ])(`ignores a traceparent of %s (${era} era): the span is a root, the baggage dropped with it`, async (_what, traceparent) => {
      const { url, s } = await rawServer()
      expect(JSON.parse(await CALLS[era](url, 'baggage', { ...TRACE, traceparent }))).toEqual({})
      const span = serverSpan(s, 'baggage')
      expect(span.parentSpanContext).toBeUndefined()
      expect(span.spanContext().traceId).not.toBe(TRACE_ID)
      expect(span.spanContext().traceState).toBeUndefined()
    })
  }
})

const WIRINGS: ReadonlyArray<{ era: Era; wiring: Wiring }> = [{ era: 'legacy', wiring: 'memory' }, { era: 'legacy', wiring: 'http' }, { era: 'modern', wiring: 'http' }]

describe('telemetry propagation from the rxmcp client', () => {
  for (const { era, wiring } of WIRINGS) {
    it(`makes the client span a child of the application's active span, and sends it as _meta.traceparent (${era} era, ${wiring})`, async () => {
      const pair = await startPair(era, wiring, cleanups, unhandled)
      const app = pair.c.tracerProvider.getTracer('app')
      const sent = await app.startActiveSpan('app', async span => {
        try { return textJson(await pair.client.callTool('meta')) } finally { span.end() }
      })
      const client = pair.c.spans().find(span => span.name === 'tools/call meta')!
      expectChildOf(client, pair.c.span('app'))
      expect(sent.traceparent).toBe(traceparentOf(client))
      expect(sent.tracestate).toBeUndefined()
      expectChildOf(serverSpan(pair.s, 'meta'), client)
    })
  }

  it('keeps both rounds of a modern input_required call in the application span\'s trace', async () => {
    const pair = await startPair('modern', 'http', cleanups, unhandled)
    const app = pair.c.tracerProvider.getTracer('app')
    await app.startActiveSpan('app', async span => { try { await pair.client.callTool('ask') } finally { span.end() } })
    const rounds = pair.c.spans().filter(span => span.name === 'tools/call ask')
    expect(rounds).toHaveLength(2)
    for (const round of rounds) expectChildOf(round, pair.c.span('app'))
  })

  it('sends the application\'s baggage along', async () => {
    const pair = await startPair('legacy', 'memory', cleanups, unhandled)
    const { context, propagation } = await import('@opentelemetry/api')
    const baggage = propagation.createBaggage({ 'user.id': { value: '42' }, 'a key': { value: 'a value' } })
    const seen = await context.with(propagation.setBaggage(context.active(), baggage), () => pair.client.callTool('baggage'))
    expect(textJson(seen)).toEqual({ 'user.id': '42', 'a key': 'a value' })
  })

  it('works with telemetry: true and no SDK registered, and sends no traceparent', async () => {
    const s = inMemoryOtel()
    const { server } = telemetryServer(s, unhandled)
    cleanups.push(() => server.close())
    const [clientSide, serverSide] = createMemoryPair()
    await server.listen(serverSide)
    const client = await connect(clientSide, CLIENT_INFO, { ...CLIENT_OPTIONS, era: 'legacy', telemetry: true })
    cleanups.push(() => client.close())
    const sent = textJson(await client.callTool('meta'))
    expect(sent).not.toHaveProperty('traceparent')
    expect(sent).not.toHaveProperty('baggage')
    expect(serverSpan(s, 'meta').parentSpanContext).toBeUndefined()
  })
})

describe('telemetry off', () => {
  it('leaves every request unwatched on a connection without an observer', async () => {
    const [near, far] = createMemoryPair()
    const server = createConnection(far)
    const client = createConnection(near)
    let seen: IncomingRequest | undefined
    server.setRequestHandler('x/echo', (params, request) => { seen = request; return { echoed: params?.value ?? null } })
    server.start()
    client.start()
    cleanups.push(() => client.close(), () => server.close())
    const { lastValueFrom } = await import('rxjs')
    const last = await lastValueFrom(client.request('x/echo', { value: 1 }))
    expect(last).toEqual({ type: 'result', result: { echoed: 1 } })
    expect(seen).toBeDefined()
    expect(seen!.watch).toBeUndefined()
    expect(seen!.meta).toEqual({ progressToken: expect.anything() })
  })

  it('serves and calls as before, with no trace context on the wire', async () => {
    const { server } = telemetryServer(undefined, unhandled)
    cleanups.push(() => server.close())
    const [clientSide, serverSide] = createMemoryPair()
    await server.listen(serverSide)
    const client = await connect(clientSide, CLIENT_INFO, { ...CLIENT_OPTIONS, era: 'legacy' })
    cleanups.push(() => client.close())
    expect(await client.callTool('echo', { text: 'plain' })).toEqual({ content: [{ type: 'text', text: 'plain' }] })
    expect(textJson(await client.callTool('meta'))).not.toHaveProperty('traceparent')
    expect((await client.callTool('trace')).content[0]).toEqual({ type: 'text', text: 'none' })
  })
})

describe('telemetry of notifications', () => {
  it('gives a notification a span on each side, the receiver continuing the sender’s context from _meta; progress and log messages get none', async () => {
    const pair = await startPair('legacy', 'memory', cleanups, unhandled)
    // notifications/initialized went from the client to the server during the handshake.
    const sent = pair.c.span('notifications/initialized')
    const received = pair.s.span('notifications/initialized')
    expect(sent.kind).toBe(SpanKind.CLIENT)
    expect(received.kind).toBe(SpanKind.SERVER)
    expect(received.spanContext().traceId).toBe(sent.spanContext().traceId)
    expect(received.parentSpanContext?.spanId).toBe(sent.spanContext().spanId)
    expect(received.attributes['mcp.method.name']).toBe('notifications/initialized')
    pair.server.log('info', 'hello')
    await pair.client.callTool('echo', { text: 'x' })
    const names = [...pair.s.spans(), ...pair.c.spans()].map(span => span.name)
    expect(names).not.toContain('notifications/message')
    expect(names).not.toContain('notifications/progress')
  })
})
