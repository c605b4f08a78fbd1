import { describe, expect, it } from 'vitest'
import type { McpServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import type { RedisScaleOut } from '../../transports/redis.ts'
import { collected } from '../helpers/collected.ts'
import { useScaleOut, type ScaleInstance } from '../helpers/scale-instances.ts'

/**
 * Issue 27, item 5, in one process: two instances on a real redis-server, each on its own HTTP
 * listener, and a balancer of the test's own (a fetch that picks an instance from a list, as nginx
 * does from its upstreams) from which the draining instance is taken out first, as a rolling restart does.
 */
const { start } = useScaleOut()

/** The everything server plus `whoami` (the cluster instance id that served the call). */
function everything(scale: RedisScaleOut): McpServer {
  const server = createEverythingServer({ ...scale.server })
  server.tool('whoami', { inputSchema: { type: 'object', properties: {} } }, () => ({ content: [{ type: 'text', text: scale.instanceId }] }))
  return server
}

const instance = (prefix: string) => start(prefix, scale => ({ server: everything(scale), http: streamableHttp({ host: '127.0.0.1', port: 0, retryMs: 50, ...scale.http }) }))
const textOf = (result: { content: unknown }) => (result.content as { text: string }[])[0]!.text

/** A round-robin balancer over `upstreams` (mutable), as fetch: the path and query go to the instance picked. */
function balancer(upstreams: ScaleInstance[]): typeof fetch {
  let next = 0
  return (input, init) => {
    const target = upstreams[next++ % upstreams.length]!
    const url = new URL(input instanceof Request ? input.url : String(input))
    return fetch(new URL(url.pathname + url.search, target.http.url!), init)
  }
}

describe('McpServer.drain on a scaled-out Streamable HTTP listener', () => {
  it('fails its health check, finishes the call in flight, hands its session over at once, and the client goes on elsewhere without an error', async () => {
    const a = await instance('drain1:')
    const b = await instance('drain1:')
    const health = (each: ScaleInstance) => fetch(new URL('/health', each.http.url!)).then(async response => ({ status: response.status, body: await response.json() as unknown }))
    expect(await health(a)).toEqual({ status: 200, body: { status: 'serving', sessions: 0 } })
    // The session starts on a (the only upstream), then requests spread over both.
    const upstreams = [a]
    const transport = streamableHttpClient('http://balancer/mcp', { fetch: balancer(upstreams) })
    const client = await connect(transport, { name: 'ours', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
    try {
      upstreams.push(b)
      expect(textOf(await client.callTool('whoami', {}))).toBe(a.scale.instanceId)
      const updates = collected<unknown>()
      client.notifications('notifications/resources/updated').subscribe(update => updates.push(update))
      await client.subscribeResource('everything://readme')
      await client.callTool('touch', { uri: 'everything://readme' })
      await updates.when(items => items.length >= 1)

      // A call running on a when the drain starts.
      const progress = collected<number>()
      const running = client.callTool('long_running', { steps: 20, ms: 25 }, { onProgress: event => progress.push(event.progress) })
      await progress.when(items => items.length >= 2)
      // The balancer takes a out (nginx reloaded without it), then a drains.
      upstreams.splice(0, 1)
      const drained = a.server.drain({ timeoutMs: 10_000 })
      expect(await health(a)).toEqual({ status: 503, body: { status: 'draining' } })
      // Calls go on meanwhile (through b, forwarded to a while it holds the session).
      const calls = Array.from({ length: 5 }, (_, n) => client.callTool('echo', { text: `during ${n}` }).then(textOf))
      expect(textOf(await running)).toBe('Finished 20 steps')
      expect(progress.items).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
      expect(await Promise.all(calls)).toEqual(Array.from({ length: 5 }, (_, n) => `during ${n}`))
      await drained
      // Closed: the port is gone.
      await expect(fetch(new URL('/health', a.http.url!))).rejects.toThrow()

      // Handed over to the running instance, not left to expire: b holds it already (before the
      // client came back), with the session's state.
      const record = await b.scale.redis.eval(`return redis.call('HGETALL', KEYS[1])`, { keys: [`drain1:session:${transport.sessionId}`], arguments: [] }) as string[]
      expect(record[record.indexOf('o') + 1]).toBe(b.scale.instanceId)
      expect(record).toContain('s')
      // b took the session on at once, its subscription with it: an update raised there by another
      // client reaches this one before it sent anything to b.
      const other = await connect(streamableHttpClient(b.http.url!), { name: 'other', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
      await other.callTool('touch', { uri: 'everything://readme' })
      await updates.when(items => items.length >= 2)
      await other.close()
      // The same session, now held by b.
      expect(textOf(await client.callTool('whoami', {}))).toBe(b.scale.instanceId)
      await client.callTool('touch', { uri: 'everything://readme' })
      await updates.when(items => items.length >= 3)
      expect(updates.items).toHaveLength(3)
    } finally {
      await client.close()
    }
  }, 30_000)

  it('leaves the session to the first instance its client reaches when no instance runs to take it', async () => {
    const a = await instance('drain3:')
    const upstreams = [a]
    const transport = streamableHttpClient('http://balancer/mcp', { fetch: balancer(upstreams) })
    const client = await connect(transport, { name: 'ours', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
    try {
      const updates = collected<unknown>()
      client.notifications('notifications/resources/updated').subscribe(update => updates.push(update))
      await client.subscribeResource('everything://readme')
      await a.server.drain({ timeoutMs: 10_000 })
      // Alone, a could hand the session to no one: its record names an owner no instance runs as.
      const record = await a.scale.redis.eval(`return redis.call('HGETALL', KEYS[1])`, { keys: [`drain3:session:${transport.sessionId}`], arguments: [] }) as string[]
      expect(record[record.indexOf('o') + 1]).toBe(`${a.scale.instanceId}~drained`)
      // The replacement starts; the client's next request takes the session over there, subscription and all.
      const b = await instance('drain3:')
      upstreams.splice(0, 1, b)
      expect(textOf(await client.callTool('whoami', {}))).toBe(b.scale.instanceId)
      await client.callTool('touch', { uri: 'everything://readme' })
      await updates.when(items => items.length >= 1)
      expect(updates.items).toHaveLength(1)
    } finally {
      await client.close()
    }
  }, 30_000)

  it('refuses a new session once draining, with 503 and Retry-After', async () => {
    const a = await instance('drain2:')
    const post = () => fetch(a.http.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'late', version: '1' } } }),
    })
    // A session with a call in flight keeps the drain open long enough to knock.
    const client = await connect(streamableHttpClient(a.http.url!), { name: 'busy', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
    const progress = collected<number>()
    const running = client.callTool('long_running', { steps: 40, ms: 25 }, { onProgress: event => progress.push(event.progress) })
    await progress.when(items => items.length >= 1)
    const drained = a.server.drain({ timeoutMs: 10_000 })
    // healthGraceMs 0: refused from the first turn on.
    await new Promise(resolve => setImmediate(resolve))
    const refused = await post()
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: 1, error: { message: expect.stringMatching(/shutting down/) } })
    expect(textOf(await running)).toBe('Finished 40 steps')
    await drained
    await client.close()
  }, 30_000)
})
