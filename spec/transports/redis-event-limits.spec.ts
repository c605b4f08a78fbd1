import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request as httpRequest } from 'node:http'
import { connectRedis, type RedisLike } from '../../transports/redis.ts'
import { redisEventStore } from '../../transports/redis-event-store.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { createServer } from '../../actors/server.ts'
import type { JsonRpcPayload } from '../../lib/jsonrpc/message.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { redisSlot } from '../../transports/redis-slot.ts'

/** Issue 20, finding 9: the Redis event store's byte bounds, against a real redis-server started for this file. */
let server: TestRedis
let redis: RedisLike & { close(): Promise<unknown>; info(section: string): Promise<string> }
let prefixCount = 0
/** A fresh key prefix per test, so tests share the server and nothing else. */
const prefix = () => `ev${++prefixCount}:`

beforeAll(async () => {
  server = await startRedis()
  redis = await connectRedis(server.url) as unknown as typeof redis
}, 30_000)
afterAll(async () => {
  await redis?.close()
  await server?.stop()
})

const KiB = 1024
const MiB = 1024 * KiB
/** A notification whose JSON text is about `size` bytes. */
const big = (size: number, n = 0): JsonRpcPayload => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `${n}:${'x'.repeat(size - 80)}` } })
const none = () => { throw new Error('nothing may be replayed') }
/** What Redis has allocated now (INFO memory used_memory). */
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1])

/** The shard an event id names (0 without shards). */
const shardOfId = (id: string) => Number(/_(?:(\d+)\.)?\d+-\d+$/.exec(id)?.[1] ?? 0)

// One shard, and two: the bounds in all are then each shard's half, a session's in one shard.
describe.each([1, 2])('issue 20: The Redis event store has no byte caps (%i shard(s))', shards => {
  it('one session cannot exceed its byte quota; its newest events stay resumable', async () => {
    const store = redisEventStore(redis, { prefix: prefix(), maxBytesPerSession: 256 * KiB, shards })
    let last = ''
    let previous = ''
    // 2 MiB over 20 streams of one session (abandoned POSTs): only the newest 256 KiB stays.
    for (let stream = 0; stream < 20; stream++) {
      for (let n = 0; n < 13; n++) { previous = last; last = await store.storeEvent(`a${stream}`, big(8 * KiB, n), { sessionId: 'A' }) }
    }
    expect(await store.sessionBytes('A')).toBeLessThanOrEqual(256 * KiB)
    expect(await store.sessionBytes('A')).toBeGreaterThan(200 * KiB)
    expect((await store.stats()).bytes).toBe(await store.sessionBytes('A'))
    const replayed: string[] = []
    expect(await store.replayEventsAfter(previous, id => { replayed.push(id) })).toBe('a19')
    expect(replayed).toEqual([last])
  })

  it('bounds the total over every session, the session holding the most paying first', async () => {
    const store = redisEventStore(redis, { prefix: prefix(), maxBytesPerSession: 256 * KiB, maxBytes: 512 * KiB, shards })
    const shardOf: number[] = []
    for (let session = 0; session < 10; session++) {
      for (let n = 0; n < 25; n++) shardOf[session] = shardOfId(await store.storeEvent(`s${session}`, big(8 * KiB, n), { sessionId: `S${session}` }))
      expect((await store.stats()).bytes).toBeLessThanOrEqual(512 * KiB)
    }
    // Every shard got sessions (so every shard's part of the total was reached).
    expect(new Set(shardOf).size).toBe(shards)
    const stats = await store.stats()
    expect(stats.bytes).toBeGreaterThan(400 * KiB)
    // No session was left with more than its share of the total, nor a shard with more than its part.
    const perShard = Array.from({ length: shards }, () => 0)
    for (let session = 0; session < 10; session++) {
      const bytes = await store.sessionBytes(`S${session}`)
      expect(bytes).toBeLessThanOrEqual(256 * KiB)
      perShard[shardOf[session]!]! += bytes
    }
    for (const bytes of perShard) expect(bytes).toBeLessThanOrEqual(512 * KiB / shards)
  })

  it('another session\'s streams survive one session\'s flood, whole', async () => {
    // With shards, a shard must hold one session's allowance: A may then hold all of its shard's
    // half; B is put in A's shard (the shard is crc16(session id) mod K), so A's flood reaches it.
    const b = ['B', 'C', 'D'].find(name => redisSlot(name) % shards === redisSlot('A') % shards)!
    const store = redisEventStore(redis, { prefix: prefix(), maxBytesPerSession: shards === 1 ? 4 * MiB : MiB, maxBytes: MiB * shards, shards })
    const first = await store.storeEvent('b1', big(200, 0), { sessionId: b })
    for (let n = 1; n < 10; n++) await store.storeEvent('b1', big(200, n), { sessionId: b })
    // A floods far past the total, from many streams.
    let flooded = ''
    for (let n = 0; n < 256; n++) flooded = await store.storeEvent(`a${n % 16}`, big(16 * KiB, n), { sessionId: 'A' })
    expect(shardOfId(flooded)).toBe(shardOfId(first))
    expect((await store.stats()).bytes).toBeLessThanOrEqual(MiB)
    const replayed: JsonRpcPayload[] = []
    expect(await store.replayEventsAfter(first, (_id, message) => { replayed.push(message) })).toBe('b1')
    expect(replayed).toEqual(Array.from({ length: 9 }, (_, n) => big(200, n + 1)))
  })

  it('refuses a resume that would skip dropped events, and an event larger than the stream\'s budget is not kept', async () => {
    const store = redisEventStore(redis, { prefix: prefix(), maxBytesPerStream: 64 * KiB, shards })
    const ids: string[] = []
    for (let n = 0; n < 20; n++) ids.push(await store.storeEvent('s', big(8 * KiB, n), { sessionId: 'A' }))
    // Only the newest seven fit in 64 KiB: a replay from before them would have a gap.
    expect(await store.replayEventsAfter(ids[5]!, none)).toBeUndefined()
    const replayed: string[] = []
    expect(await store.replayEventsAfter(ids[14]!, id => { replayed.push(id) })).toBe('s')
    expect(replayed).toEqual(ids.slice(15))
    await store.storeEvent('s', big(128 * KiB), { sessionId: 'A' })
    expect(await store.sessionBytes('A')).toBe(0)
  })

  it('frees abandoned streams by their ttl, and settles their counters', async () => {
    let clock = 1_000_000
    const keyPrefix = prefix()
    const store = redisEventStore(redis, { prefix: keyPrefix, ttlSeconds: 60, now: () => clock, shards })
    const abandoned = await store.storeEvent('gone', big(4 * KiB), { sessionId: 'A' })
    // Every key of the stream and the session expires by itself.
    // The shard's tag: `{events}` with one shard, `{events:<k>/<K>:<n>}` with several.
    const keys = await redis.eval('return redis.call("KEYS", ARGV[1])', { keys: [], arguments: [`${keyPrefix}*`] }) as string[]
    const tag = /^[^{]*(\{[^}]*\})/.exec(keys[0]!)![1]!
    expect(tag).toMatch(shards === 1 ? /^\{events\}$/ : new RegExp(`^\\{events:${shardOfId(abandoned)}/${shards}:\\d+\\}$`))
    for (const key of [`${keyPrefix}${tag}:events:gone`, `${keyPrefix}${tag}:event-meta:gone`, `${keyPrefix}${tag}:event-session:A`, `${keyPrefix}${tag}:event-session-streams:A`]) {
      const ttl = Number(await redis.eval('return redis.call("PTTL", KEYS[1])', { keys: [key], arguments: [] }))
      expect(ttl, key).toBeGreaterThan(0)
      expect(ttl, key).toBeLessThanOrEqual(60_000)
    }
    clock += 61_000
    // What expired is settled by the next write in its shard: B is in A's.
    const b = ['B', 'C', 'D'].find(name => redisSlot(name) % shards === redisSlot('A') % shards)!
    await store.storeEvent('other', big(200), { sessionId: b })
    expect(await store.stats()).toMatchObject({ sessions: 1, streams: 1 })
    expect(await store.sessionBytes('A')).toBe(0)
    expect(await store.replayEventsAfter(abandoned, none)).toBeUndefined()
  })

  it('forgets a deleted stream and session in its counters', async () => {
    const store = redisEventStore(redis, { prefix: prefix(), shards })
    await store.storeEvent('s1', big(1000), { sessionId: 'A', pending: [1, 'two'] })
    await store.storeEvent('s2', big(1000), { sessionId: 'A' })
    // Found with its session (the server's way: straight to its shard) and without (every shard).
    expect(await store.pendingOf!('s1', 'A')).toEqual([1, 'two'])
    expect(await store.pendingOf!('s1')).toEqual([1, 'two'])
    expect(await store.pendingOf!('s2', 'A')).toBeUndefined()
    expect(await store.hasStream!('A', 's1')).toBe(true)
    expect(await store.hasStream!('B', 's1')).toBe(false)
    await store.deleteStream!('s1', 'A')
    expect(await store.stats()).toEqual({ streams: 1, sessions: 1, bytes: JSON.stringify(big(1000)).length + 64 })
    await store.deleteSession!('A')
    expect(await store.stats()).toEqual({ streams: 0, sessions: 0, bytes: 0 })
    // A stream deleted without its session is looked for in every shard.
    await store.storeEvent('s3', big(1000), { sessionId: 'A' })
    await store.deleteStream!('s3')
    expect(await store.stats()).toEqual({ streams: 0, sessions: 0, bytes: 0 })
  })

  it('Redis memory (used_memory) stays bounded under 61 abandoned POSTs of 1 MiB each from one session', async () => {
    const mcp = createServer({ name: 'flood', version: '1' })
    mcp.tool('flood', {}, async (_args, ctx) => {
      // 1 MiB of notifications on the POST's stream, then a call that never ends (the client is gone).
      for (let n = 1; n <= 16; n++) ctx.progress(n, 16, 'y'.repeat(64 * KiB))
      await new Promise(() => {})
      return { content: [] }
    })
    const http = streamableHttp({ port: 0, host: '127.0.0.1', eventStore: redisEventStore(redis, { prefix: prefix(), shards }) })
    await mcp.listen(http)
    const url = new URL(http.url!)
    const post = (body: unknown, headers: Record<string, string> = {}, abandon = false) => new Promise<{ headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: url.port, path: url.pathname, method: 'POST', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers } }, res => {
        let data = ''
        res.setEncoding('utf8')
        res.on('data', chunk => {
          data += chunk
          // The client goes away once the call is under way.
          if (abandon && data.includes('notifications/progress')) { res.destroy(); resolve({ headers: res.headers, body: data }) }
        })
        res.on('end', () => resolve({ headers: res.headers, body: data }))
        res.on('error', () => {})
      })
      req.on('error', reject)
      req.end(JSON.stringify(body))
    })
    try {
      const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
      const session = { 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' }
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)
      const before = await usedMemory()
      for (let n = 1; n <= 61; n++) {
        await post({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'flood', arguments: {}, _meta: { progressToken: n } } }, session, true)
      }
      // The store writes on this same connection: INFO runs after every event the calls stored.
      const grown = await usedMemory() - before
      console.log(`61 abandoned 1 MiB POSTs: Redis used_memory grew by ${(grown / MiB).toFixed(1)} MiB (session quota 16 MiB)`)
      // The session's quota (16 MiB by default), plus what Redis spends beside the data.
      expect(grown).toBeLessThan(24 * MiB)
    } finally {
      await mcp.close()
    }
  }, 60_000)
})

describe('redisEventStore shards', () => {
  it('refuses a number of shards that is not a whole 1 to 1024, or whose shards cannot hold one session\'s allowance', () => {
    for (const shards of [0, 1.5, 1025, Number.NaN]) expect(() => redisEventStore(redis, { shards })).toThrow(RangeError)
    // 128 MiB in all over 9 shards is 14.2 MiB each: less than a session's 16 MiB.
    expect(() => redisEventStore(redis, { shards: 9 })).toThrow(/9 shards leave each 1111 streams and 14913080 bytes, less than one session's allowance \(100 streams, 16777216 bytes\)/)
    expect(redisEventStore(redis, { shards: 8 }).shards).toBe(8)
    // One server: one shard unless asked.
    expect(redisEventStore(redis).shards).toBe(1)
    // A session's allowance above the total works with one shard only.
    expect(() => redisEventStore(redis, { shards: 2, maxBytesPerSession: 4 * MiB, maxBytes: MiB })).toThrow(RangeError)
    expect(() => redisEventStore(redis, { maxBytesPerSession: 4 * MiB, maxBytes: MiB })).not.toThrow()
  })
})
