import { describe, expect, it } from 'vitest'
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics'
import { asyncContextForFile, type InMemoryOtel } from '../helpers/otel.ts'
import { LEGACY, MODERN, startPair, type Era, type Wiring } from '../helpers/otel-pair.ts'
import { cleanupsAfterEach } from '../helpers/cleanups.ts'
import { sessionsEnded } from '../helpers/sessions-ended.ts'

asyncContextForFile()
const { cleanups, unhandled } = cleanupsAfterEach()

/** Each data point of an instrument as its attributes and its count (histograms) or value (counters). */
async function recorded(otel: InMemoryOtel, name: string): Promise<Array<{ attributes: object; value: number }>> {
  return (await otel.points(name)).map((point: DataPoint<number | Histogram>) => ({
    attributes: point.attributes, value: typeof point.value === 'number' ? point.value : point.value.count,
  }))
}

const TOOL = { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool' }

const WIRINGS: ReadonlyArray<{ era: Era; wiring: Wiring }> = [{ era: 'legacy', wiring: 'memory' }, { era: 'legacy', wiring: 'http' }, { era: 'modern', wiring: 'http' }]

for (const { era, wiring } of WIRINGS) {
  describe(`telemetry metrics, ${era} era over ${wiring === 'http' ? 'Streamable HTTP' : 'a memory pair'}`, () => {
    const version = { 'mcp.protocol.version': era === 'legacy' ? LEGACY : MODERN }
    const network = wiring === 'http' ? { 'network.transport': 'tcp', 'network.protocol.name': 'http' } : {}
    const handshake = era === 'legacy' ? 'initialize' : 'server/discover'

    it('counts each call in the operation duration histograms by method, tool, version, network and error', async () => {
      const pair = await startPair(era, wiring, cleanups, unhandled)
      await pair.client.callTool('echo', { text: 'a' })
      await pair.client.callTool('echo', { text: 'b' })
      await pair.client.callTool('fails')
      await pair.client.callTool('nope').catch(() => {})
      await pair.client.listTools()
      const expected = (side: 'server' | 'client') => [
        { attributes: { 'mcp.method.name': handshake, ...version, ...network }, value: 1 },
        { attributes: { ...TOOL, 'gen_ai.tool.name': 'echo', ...version, ...network }, value: 2 },
        { attributes: { ...TOOL, 'gen_ai.tool.name': 'fails', ...version, ...network, 'error.type': 'tool_error' }, value: 1 },
        // The server does not name a tool it does not have (the caller chose the name: unbounded).
        { attributes: { ...TOOL, ...(side === 'client' ? { 'gen_ai.tool.name': 'nope' } : {}), ...version, ...network, 'error.type': '-32602', 'rpc.response.status_code': '-32602' }, value: 1 },
        { attributes: { 'mcp.method.name': 'tools/list', ...version, ...network }, value: 1 },
      ]
      for (const [otel, name, side] of [[pair.s, 'mcp.server.operation.duration', 'server'], [pair.c, 'mcp.client.operation.duration', 'client']] as const) {
        // The client's also name the server it calls (from its URL).
        const server = side === 'client' && wiring === 'http' ? { 'server.address': '127.0.0.1', 'server.port': Number(new URL(pair.url!).port) } : {}
        const expectedOfSide = expected(side).map(point => ({ ...point, attributes: { ...point.attributes, ...server } }))
        expect(await recorded(otel, name)).toEqual(expect.arrayContaining(expectedOfSide))
        expect(await recorded(otel, name)).toHaveLength(expectedOfSide.length)
      }
      // In seconds, in the conventions' buckets.
      const metric = (await pair.s.metrics()).get('mcp.server.operation.duration')!
      expect(metric.descriptor.unit).toBe('s')
      expect((metric.dataPoints[0]!.value as Histogram).buckets.boundaries).toEqual([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300])
    })

    it('holds the active requests while they run, and none after', async () => {
      const pair = await start()
      const abort = new AbortController()
      const call = pair.client.callTool('wait', {}, { signal: abort.signal }).catch(() => {})
      await pair.waiting.atLeast(1)
      expect(await recorded(pair.s, 'rxmcp.server.requests.active')).toContainEqual({ attributes: { 'mcp.method.name': 'tools/call' }, value: 1 })
      expect(await recorded(pair.c, 'rxmcp.client.requests.active')).toContainEqual({ attributes: { 'mcp.method.name': 'tools/call' }, value: 1 })
      abort.abort()
      await call
      await pair.s.ended('tools/call wait')
      for (const [otel, name] of [[pair.s, 'rxmcp.server.requests.active'], [pair.c, 'rxmcp.client.requests.active']] as const) {
        const values = await recorded(otel, name)
        expect(values.map(point => point.attributes)).toContainEqual({ 'mcp.method.name': 'tools/call' })
        expect(values.map(point => point.value)).toEqual(values.map(() => 0))
      }
    })

    if (era === 'legacy') {
      it('records each closed session once, and holds the sessions open while they are', async () => {
        const pair = await start()
        expect(await recorded(pair.s, 'rxmcp.server.sessions.active')).toEqual([{ attributes: network, value: 1 }])
        expect(await recorded(pair.c, 'rxmcp.client.sessions.active')).toEqual([{ attributes: network, value: 1 }])
        expect(await recorded(pair.s, 'mcp.server.session.duration')).toEqual([])
        await pair.client.close()
        await sessionsEnded(pair.server)
        expect(await recorded(pair.s, 'rxmcp.server.sessions.active')).toEqual([{ attributes: network, value: 0 }])
        expect(await recorded(pair.c, 'rxmcp.client.sessions.active')).toEqual([{ attributes: network, value: 0 }])
        expect(await recorded(pair.s, 'mcp.server.session.duration')).toEqual([{ attributes: { ...network, ...version }, value: 1 }])
        expect(await recorded(pair.c, 'mcp.client.session.duration')).toEqual([{ attributes: { ...network, ...version }, value: 1 }])
      })
    }

    it('counts tasks by status while they run, and ended tasks by final status', async () => {
      const pair = await start()
      const result = pair.client.callToolAsTaskResult('slow')
      await pair.slowStarted(1)
      expect(await recorded(pair.s, 'rxmcp.server.tasks.active')).toEqual([{ attributes: { 'mcp.task.status': 'working' }, value: 1 }])
      pair.openSlow()
      await result
      await pair.s.ended('task slow')
      expect(await recorded(pair.s, 'rxmcp.server.tasks.active')).toEqual([{ attributes: { 'mcp.task.status': 'working' }, value: 0 }])
      expect(await recorded(pair.s, 'rxmcp.server.tasks.ended')).toEqual([{ attributes: { 'mcp.task.status': 'completed' }, value: 1 }])
    })

    function start() {
      return startPair(era, wiring, cleanups, unhandled)
    }
  })
}

describe('telemetry metrics and names a peer makes up', () => {
  it('records an unknown method as _OTHER and counts nothing in flight for it, while its span keeps the name', async () => {
    const pair = await startPair('legacy', 'memory', cleanups, unhandled)
    for (const method of ['made/up-1', 'made/up-2', 'made/up-3']) await pair.client.connection.request(method as never).forEach(() => {}).catch(() => {})
    const durations = await recorded(pair.s, 'mcp.server.operation.duration')
    expect(durations.filter(point => (point.attributes as Record<string, unknown>)['error.type'] === '-32601'))
      .toEqual([{ attributes: { 'mcp.method.name': '_OTHER', 'mcp.protocol.version': LEGACY, 'error.type': '-32601', 'rpc.response.status_code': '-32601' }, value: 3 }])
    const active = await recorded(pair.s, 'rxmcp.server.requests.active')
    expect(active.map(point => (point.attributes as Record<string, unknown>)['mcp.method.name'])).not.toContain('made/up-1')
    expect(pair.s.spans().map(span => span.name)).toEqual(expect.arrayContaining(['made/up-1', 'made/up-2', 'made/up-3']))
  })
})
