import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SpanKind } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { PassThrough } from 'node:stream'
import { connect, type McpClient } from '../../actors/client.ts'
import type { McpServer } from '../../actors/server.ts'
import type { Transport } from '../../lib/transport.ts'
import { stdio } from '../../transports/stdio.ts'
import { websocket } from '../../transports/websocket.ts'
import { websocketClient } from '../../transports/websocket-client.ts'
import { asyncContextForFile, inMemoryOtel } from '../helpers/otel.ts'
import { CLIENT_INFO, LEGACY, MODERN, expectChildOf, startPair, telemetryServer, text, type Era, type Pair, type Wiring } from '../helpers/otel-pair.ts'
import { cleanupsAfterEach } from '../helpers/cleanups.ts'

asyncContextForFile()
const { cleanups, unhandled } = cleanupsAfterEach()

/** One method family: how the client calls it, the span name, the attributes only it has. */
interface Family {
  readonly method: string
  readonly name: string
  readonly call: ((client: McpClient) => Promise<unknown>) | undefined
  readonly attributes: Record<string, string>
}

const FAMILIES: readonly Family[] = [
  { method: 'tools/list', name: 'tools/list', call: client => client.listTools(), attributes: {} },
  {
    method: 'tools/call', name: 'tools/call echo', call: client => client.callTool('echo', { text: 'hi' }),
    attributes: { 'gen_ai.tool.name': 'echo', 'gen_ai.operation.name': 'execute_tool' },
  },
  { method: 'prompts/get', name: 'prompts/get greet', call: client => client.getPrompt('greet', { name: 'Ada' }), attributes: { 'gen_ai.prompt.name': 'greet' } },
  // The URI is an attribute, never part of the name (high cardinality).
  { method: 'resources/read', name: 'resources/read', call: client => client.readResource('file:///notes.txt'), attributes: { 'mcp.resource.uri': 'file:///notes.txt' } },
  {
    method: 'completion/complete', name: 'completion/complete', attributes: {},
    call: client => client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } }),
  },
  { method: 'logging/setLevel', name: 'logging/setLevel', call: client => client.setLoggingLevel('info'), attributes: {} },
]

/** The four ways the specs wire a client to the server. */
const WIRINGS: ReadonlyArray<{ era: Era; wiring: Wiring }> = [
  { era: 'legacy', wiring: 'memory' }, { era: 'legacy', wiring: 'http' }, { era: 'modern', wiring: 'memory' }, { era: 'modern', wiring: 'http' },
]

/**
 * What both sides record of every request in this wiring: the method, the version, over HTTP the
 * network, in a legacy HTTP session its id (the client knows it once initialize is answered).
 */
function common(pair: Pair, era: Era, wiring: Wiring, method: string, side: 'server' | 'client'): Record<string, string | number> {
  const attributes: Record<string, string | number> = { 'mcp.method.name': method, 'mcp.protocol.version': era === 'legacy' ? LEGACY : MODERN }
  if (wiring === 'http') Object.assign(attributes, { 'network.transport': 'tcp', 'network.protocol.name': 'http' })
  // The client names the server it calls, from the URL it was given.
  if (wiring === 'http' && side === 'client') Object.assign(attributes, { 'server.address': '127.0.0.1', 'server.port': Number(new URL(pair.url!).port) })
  const sessionId = (pair.transport as { sessionId?: string }).sessionId
  if (era === 'legacy' && wiring === 'http' && (side === 'server' || method !== 'initialize')) attributes['mcp.session.id'] = sessionId!
  return attributes
}

/** The one span of `name` of `kind` among `spans`. */
function only(spans: ReadableSpan[], name: string, kind: SpanKind): ReadableSpan {
  const found = spans.filter(span => span.name === name && span.kind === kind)
  expect(found.map(span => span.name)).toEqual([name])
  return found[0]!
}

/**
 * Asserts the request's two spans: CLIENT on the client and SERVER on the server, the server's the
 * child of the client's, each with exactly `attributes` (the server also the client's address over
 * HTTP), the same request id on both.
 */
function expectRequestSpans(pair: Pair, era: Era, wiring: Wiring, family: { method: string; name: string; attributes: Record<string, string> }) {
  const client = only(pair.c.spans(), family.name, SpanKind.CLIENT)
  const server = only(pair.s.spans(), family.name, SpanKind.SERVER)
  const id = client.attributes['jsonrpc.request.id']
  expect(id).toMatch(/^\d+$/)
  expect(client.attributes).toEqual({ ...common(pair, era, wiring, family.method, 'client'), ...family.attributes, 'jsonrpc.request.id': id })
  expect(server.attributes).toEqual({
    ...common(pair, era, wiring, family.method, 'server'), ...family.attributes, 'jsonrpc.request.id': id,
    ...(wiring === 'http' ? { 'client.address': '127.0.0.1' } : {}),
  })
  expectChildOf(server, client)
  expect(client.parentSpanContext).toBeUndefined()
  expect([client.status, server.status]).toEqual([{ code: 0 }, { code: 0 }])
  return { client, server }
}

for (const { era, wiring } of WIRINGS) {
  describe(`telemetry spans, ${era} era over ${wiring === 'http' ? 'Streamable HTTP' : 'a memory pair'}`, () => {
    // One pair for the file's calls: each test reads the spans of its own method only.
    let pair: Pair
    const own: Array<() => unknown> = []
    beforeAll(async () => { pair = await startPair(era, wiring, own, unhandled) })
    afterAll(async () => { for (const cleanup of own.splice(0).reverse()) await cleanup() })

    const handshake = era === 'legacy' ? 'initialize' : 'server/discover'
    it(`records the ${handshake} handshake`, () => {
      expectRequestSpans(pair, era, wiring, { method: handshake, name: handshake, attributes: {} })
    })

    // Modern clients send no logging/setLevel: the level travels in every request's _meta.
    for (const family of FAMILIES.filter(family => era === 'legacy' || family.method !== 'logging/setLevel')) {
      it(`records ${family.method} as "${family.name}"`, async () => {
        await family.call!(pair.client)
        expectRequestSpans(pair, era, wiring, family)
      })
    }

    it('nests spans the tool handler starts under its server span (sync, async and Observable handlers)', async () => {
      for (const tool of ['inner-sync', 'inner-async', 'inner-observable']) {
        expect(await pair.client.callTool(tool)).toEqual(text(tool.slice(6)))
        const server = only(pair.s.spans(), `tools/call ${tool}`, SpanKind.SERVER)
        const inner = pair.s.spans().filter(span => span.name === 'inner' && span.parentSpanContext?.spanId === server.spanContext().spanId)
        expect(inner).toHaveLength(1)
        expectChildOf(inner[0]!, server)
      }
    })

    if (era === 'legacy') {
      it.each([
        { tool: 'ask', method: 'elicitation/create' },
        { tool: 'roots', method: 'roots/list' },
        { tool: 'sample', method: 'sampling/createMessage' },
      ])('records the server\'s $method as a CLIENT span on the server and a SERVER span on the client', async ({ tool, method }) => {
        await pair.client.callTool(tool)
        const call = only(pair.s.spans(), `tools/call ${tool}`, SpanKind.SERVER)
        const asked = only(pair.s.spans(), method, SpanKind.CLIENT)
        const answered = only(pair.c.spans(), method, SpanKind.SERVER)
        expectChildOf(asked, call)
        expectChildOf(answered, asked)
        const id = asked.attributes['jsonrpc.request.id']
        expect(answered.attributes['jsonrpc.request.id']).toBe(id)
        const attributes = { ...common(pair, era, wiring, method, 'server'), 'jsonrpc.request.id': id }
        expect(asked.attributes).toEqual(attributes)
        expect(answered.attributes).toEqual(attributes)
        expect([asked.status, answered.status]).toEqual([{ code: 0 }, { code: 0 }])
      })
    }
  })
}

describe('telemetry network attributes of the other transports', () => {
  /** A tools/call's two spans, the server listening where `wire` says and the client on the transport it gives. */
  async function over(wire: (server: McpServer) => Promise<Transport>) {
    const s = inMemoryOtel()
    const c = inMemoryOtel()
    const { server } = telemetryServer(s, unhandled)
    cleanups.push(() => server.close())
    const client = await connect(await wire(server), CLIENT_INFO, { era: 'legacy', telemetry: { tracerProvider: c.tracerProvider, meterProvider: c.meterProvider } })
    cleanups.push(() => client.close())
    await client.callTool('echo', { text: 'x' })
    const spans = { client: only(c.spans(), 'tools/call echo', SpanKind.CLIENT), server: only(s.spans(), 'tools/call echo', SpanKind.SERVER) }
    expectChildOf(spans.server, spans.client)
    return spans
  }

  it('records stdio as network.transport pipe on both sides', async () => {
    const spans = await over(async server => {
      // Two pipes: what the client writes the server reads, and back.
      const up = new PassThrough()
      const down = new PassThrough()
      await server.listen(stdio({ input: up, output: down }))
      return stdio({ input: down, output: up })
    })
    for (const span of [spans.client, spans.server]) {
      expect(span.attributes['network.transport']).toBe('pipe')
      expect(span.attributes).not.toHaveProperty('network.protocol.name')
    }
  })

  it('records WebSocket as network.transport tcp and network.protocol.name websocket, the client address on the server', async () => {
    const spans = await over(async server => {
      const ws = websocket()
      await server.listen(ws)
      return websocketClient(ws.url!)
    })
    for (const span of [spans.client, spans.server]) expect(span.attributes).toMatchObject({ 'network.transport': 'tcp', 'network.protocol.name': 'websocket' })
    expect(spans.server.attributes['client.address']).toBe('127.0.0.1')
    expect(spans.client.attributes).not.toHaveProperty('client.address')
  })
})
