import { describe, expect, it } from 'vitest'
import { lastValueFrom } from 'rxjs'
import { traceContextOf } from '../../actors/context.ts'
import { createServer, type ServerContext } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01'

describe('traceContextOf', () => {
  it.each([
    [{ traceparent: PARENT }, { traceparent: PARENT }],
    [{ traceparent: PARENT, tracestate: 'vendor=1', baggage: 'user=7', other: 1 }, { traceparent: PARENT, tracestate: 'vendor=1', baggage: 'user=7' }],
    [{ traceparent: PARENT, tracestate: 3 }, { traceparent: PARENT }],
    [undefined, undefined],
    [{}, undefined],
    [{ traceparent: 42 }, undefined],
    [{ traceparent: PARENT.toUpperCase() }, undefined],
    [{ traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' }, undefined],
    [{ traceparent: '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01' }, undefined],
    [{ traceparent: 'ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01' }, undefined],
    [{ traceparent: `${PARENT}-extra` }, undefined],
  ])('reads %j as %j', (meta, expected) => {
    expect(traceContextOf(meta as never)).toEqual(expected)
  })
})

describe('ServerContext', () => {
  it('gives a handler the trace context, the client info and the log level of its request', async () => {
    const server = createServer({ name: 'ctx', version: '1.0.0' }, { defaultLogLevel: 'warning' })
    const seen: Pick<ServerContext, 'trace' | 'clientInfo' | 'logLevel' | 'era'>[] = []
    server.tool('probe', {}, (_args, ctx) => {
      seen.push({ trace: ctx.trace, clientInfo: ctx.clientInfo, logLevel: ctx.logLevel, era: ctx.era })
      return { content: [] }
    })
    await using pair = await connectInMemory(server)
    await lastValueFrom(pair.client.request('tools/call', { name: 'probe', arguments: {}, _meta: { traceparent: PARENT, tracestate: 'a=b' } }))
    await pair.client.callTool('probe', {})
    await lastValueFrom(pair.client.request('logging/setLevel', { level: 'error' }))
    await pair.client.callTool('probe', {})
    expect(seen).toEqual([
      { trace: { traceparent: PARENT, tracestate: 'a=b' }, clientInfo: { name: 'rxmcp-test', version: '0.0.0' }, logLevel: 'warning', era: 'legacy' },
      { trace: undefined, clientInfo: { name: 'rxmcp-test', version: '0.0.0' }, logLevel: 'warning', era: 'legacy' },
      { trace: undefined, clientInfo: { name: 'rxmcp-test', version: '0.0.0' }, logLevel: 'error', era: 'legacy' },
    ])
  })
})
