import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { firstValueFrom, filter } from 'rxjs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { createSseParser, type SseEvent } from '../../lib/codec/sse.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { startNginx, type TestNginx } from '../helpers/nginx.ts'
import { collected } from '../helpers/collected.ts'
import { spawnInstance, type SpawnedInstance } from '../../examples/cluster/spawn-instance.ts'

/**
 * Three instances as child processes on one redis-server behind nginx (round-robin): one is
 * SIGKILLed while clients hold sessions on it, open streams and running requests and tasks. The
 * event store has four shards here, so a session taken over finds its streams (and their pending
 * requests) in its own shard; drain.spec.ts runs the one-shard default.
 */
const FIXTURE = fileURLToPath(new URL('./fixture-instance.ts', import.meta.url))

let redis: TestRedis
let nginx: TestNginx
const children: SpawnedInstance[] = []
const spawnFixture = () => spawnInstance({ redisUrl: redis.url, prefix: 'kill:', script: FIXTURE, env: { EVENT_SHARDS: '4' } })

beforeAll(async () => {
  redis = await startRedis()
  children.push(...await Promise.all([spawnFixture(), spawnFixture(), spawnFixture()]))
  nginx = await startNginx({ upstreams: children.map(child => new URL(child.url).host) })
}, 90_000)

afterAll(async () => {
  await nginx?.stop()
  for (const child of children) await child.stop()
  await redis?.stop()
})

const mcpUrl = () => `${nginx.url}/mcp`
const textOf = (result: { content: unknown }) => (result.content as { text: string }[])[0]!.text

/** A fetch that sends the initialize POST straight to `first` and everything else through the balancer. */
function initializeAt(first: string): typeof fetch {
  return async (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : ''
    return fetch(body.includes('"method":"initialize"') ? first : input, init)
  }
}

describe('an instance SIGKILLed under live sessions', () => {
  it('its sessions go on elsewhere: the running request is answered, the stream resumes, the subscription holds, its task is failed', async () => {
    const victim = children[0]!
    const transport = streamableHttpClient(mcpUrl(), { fetch: initializeAt(victim.url) })
    const client: McpClient = await connect(transport, { name: 'ours', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
    const sdkTransport = new StreamableHTTPClientTransport(new URL(mcpUrl()), { fetch: initializeAt(victim.url) })
    const sdk = new Client({ name: 'official', version: '1' })
    await sdk.connect(sdkTransport)
    try {
      const sessionId = transport.sessionId
      expect(JSON.parse(textOf(await client.callTool('whoami', {}))).pid).toBe(victim.pid)
      expect(JSON.parse(textOf(await sdk.callTool({ name: 'whoami', arguments: {} }) as { content: unknown })).pid).toBe(victim.pid)

      const updates = collected<unknown>()
      client.notifications('notifications/resources/updated').subscribe(update => updates.push(update))
      await client.subscribeResource('everything://readme')
      const task = await firstValueFrom(client.callToolAsTask('slow_task', {}, { ttlMs: 600_000 }).pipe(filter(event => event.type === 'task')))
      const taskId = (task as { task: { taskId: string } }).task.taskId
      const progress = collected<number>()
      const running = client.callTool('long_running', { steps: 200, ms: 50 }, { onProgress: event => progress.push(event.progress) })
      const outcome = running.then(() => 'answered', (error: Error) => error.message)
      await client.callTool('touch', { uri: 'everything://readme' })
      await Promise.all([progress.when(items => items.length >= 5), updates.when(items => items.length >= 1)])

      await victim.kill()

      // The request the dead instance was running is answered (an error), not left waiting.
      expect(await outcome).toMatch(/stopped before answering/)
      // Progress came in order, none twice.
      for (let i = 1; i < progress.items.length; i++) expect(progress.items[i]).toBeGreaterThan(progress.items[i - 1]!)
      // The same session, now served by another instance.
      const after = JSON.parse(textOf(await client.callTool('whoami', {})))
      expect(after.pid).not.toBe(victim.pid)
      expect(transport.sessionId).toBe(sessionId)
      // Its subscription went with it: an update reaches the client on its resumed stream.
      await client.callTool('touch', { uri: 'everything://readme' })
      await updates.when(items => items.length >= 2)
      // The task that ran on the dead instance is failed, and its result does not hang.
      expect((await client.tasks.get(taskId)).status).toBe('failed')
      expect(await client.tasks.result(taskId).then(() => 'a result', (error: Error) => error.message)).toMatch(/instance running this task stopped/)
      // The official client's session goes on too.
      const echoed = await sdk.callTool({ name: 'echo', arguments: { text: 'still here' } }) as { content: unknown }
      expect(textOf(echoed)).toContain('still here')
      expect(sdkTransport.sessionId).toBeDefined()
    } finally {
      await client.close()
      await sdk.close().catch(() => {})
    }
  }, 60_000)

  it('replays exactly the events after Last-Event-ID that the dead instance stored, then goes on', async () => {
    const victim = children[1]!
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
    const init = await fetch(victim.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) })
    const sessionId = init.headers.get('mcp-session-id')!
    await init.body?.cancel()
    const session = { ...headers, 'mcp-session-id': sessionId }
    let id = 1
    const post = async (method: string, params?: object) => {
      const response = await fetch(mcpUrl(), { method: 'POST', headers: session, body: JSON.stringify(method.startsWith('notifications/') ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', id: ++id, method, params }) })
      await response.text()
      expect(response.status).toBeLessThan(300)
    }
    await post('notifications/initialized')
    await post('resources/subscribe', { uri: 'everything://readme' })
    const stream = reader(await fetch(mcpUrl(), { headers: { ...session, accept: 'text/event-stream' } }))
    for (let n = 0; n < 4; n++) await post('tools/call', { name: 'touch', arguments: { uri: 'everything://readme' } })
    const seen = (await stream.take(5)).filter(event => event.data !== '')
    expect(seen).toHaveLength(4)
    // The ids name the session's shard (of four): the resume below reads that shard.
    for (const event of seen) expect(event.id).toMatch(/_[0-3]\.\d+-\d+$/)

    await victim.kill()
    await stream.ended

    const resumed = reader(await fetch(mcpUrl(), { headers: { ...session, accept: 'text/event-stream', 'last-event-id': seen[1]!.id! } }))
    const replayed = await resumed.take(2)
    // Exactly the two events after the one named, with the ids the dead instance gave them.
    expect(replayed.map(event => event.id)).toEqual([seen[2]!.id, seen[3]!.id])
    expect(replayed.map(event => event.data)).toEqual([seen[2]!.data, seen[3]!.data])
    // And the stream goes on from the instance that took the session over.
    await post('tools/call', { name: 'touch', arguments: { uri: 'everything://readme' } })
    const [next] = await resumed.take(1)
    expect(JSON.parse(next!.data)).toMatchObject({ method: 'notifications/resources/updated', params: { uri: 'everything://readme' } })
    await resumed.cancel()
  }, 60_000)
})

/** Reads SSE events from a response as they come. */
function reader(response: Response) {
  expect(response.status).toBe(200)
  const queue = collected<SseEvent>()
  const parser = createSseParser(event => queue.push(event))
  const body = response.body!.getReader()
  const decoder = new TextDecoder()
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await body.read()
        if (done) return
        parser.write(decoder.decode(value, { stream: true }))
      }
    } catch { /* the connection broke: the stream ended */ }
  })()
  let taken = 0
  return {
    ended,
    async take(count: number): Promise<SseEvent[]> {
      await queue.when(items => items.length >= taken + count)
      taken += count
      return queue.items.slice(taken - count, taken)
    },
    cancel: () => body.cancel().catch(() => {}),
  }
}
