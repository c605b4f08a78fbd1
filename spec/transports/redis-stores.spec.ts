import { describe, expect, it } from 'vitest'
import { connectRedis } from '../../transports/redis.ts'
import { redisEventStore } from '../../transports/redis-event-store.ts'
import { redisTaskStore } from '../../transports/redis-task-store.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { createServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { startRedis } from '../helpers/redis-server.ts'
import { redisStoresSuite } from './redis-stores-suite.ts'

/** The Redis stores against a real redis-server (Debian's package), started for this file. */
redisStoresSuite(async () => {
  const server = await startRedis()
  const redis = await connectRedis(server.url)
  return { redis, stop: async () => { await redis.close(); await server.stop() } }
})

describe('Redis going away', () => {
  it('a server keeps answering while Redis is down (events without ids, task creation refused), reports its health, and is whole again when it is back', async () => {
    const own = await startRedis()
    const ownRedis = await connectRedis(own.url)
    const mcp = createServer({ name: 'weathering', version: '1' }, { tasks: { store: redisTaskStore(ownRedis) } })
    mcp.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
    mcp.tool('job', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'done' }] }))
    const http = streamableHttp({ eventStore: redisEventStore(ownRedis) })
    await mcp.listen(http)
    const client = await connect(streamableHttpClient(http.url!), { name: 'c', version: '1' }, { era: 'legacy' })
    const health: string[] = []
    // Resolves when the connection is up again after it was down (the third state it reports).
    let heardBack!: () => void
    const back = new Promise<void>(resolve => { heardBack = resolve })
    const watching = ownRedis.health.subscribe(state => { if (health.push(state) === 3 && state === 'up') heardBack() })
    try {
      expect((await client.callTool('echo', { text: 'before' })).content).toEqual([{ type: 'text', text: 'before' }])
      await own.kill()
      // Down: plain calls are answered; a call that needs a new task is refused, not hung.
      expect((await client.callTool('echo', { text: 'during' })).content).toEqual([{ type: 'text', text: 'during' }])
      await expect(client.callToolAsTaskResult('job', {})).rejects.toThrow()
      await own.restart()
      // node-redis reconnects by itself (its health says so); the first task created after it is stored again.
      await back
      expect((await client.callToolAsTaskResult('job', {})).content).toEqual([{ type: 'text', text: 'done' }])
      // The instance's Redis health followed: up, down while it was gone, up again.
      expect(health).toEqual(['up', 'down', 'up'])
    } finally {
      watching.unsubscribe()
      await client.close()
      await mcp.close()
      await ownRedis.close().catch(() => {})
      await own.stop()
    }
  }, 60_000)
})
