import { describe, expect, it } from 'vitest'
import { connectRedis, type RedisConnection } from '../../transports/redis.ts'
import { redisTaskStore } from '../../transports/redis-task-store.ts'
import { redisEventStore } from '../../transports/redis-event-store.ts'
import { redisSessionCluster } from '../../transports/redis-cluster.ts'
import { redisReplayCache } from '../../transports/redis-replay-cache.ts'
import { redisRequestStateStore } from '../../transports/redis-request-state-store.ts'
import { redisRateLimiterStore } from '../../transports/redis-rate-limiter.ts'
import { redisCli, startRedisCluster, until, type TestRedisCluster } from '../helpers/redis-server.ts'
import { redisSlot } from '../../transports/redis-slot.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { redisStoresSuite, resumableServer } from './redis-stores-suite.ts'

/**
 * Issue 27: the Redis stores on a real Redis Cluster of three primaries (Debian's redis-server,
 * joined by `redis-cli --cluster create`), started once for this file. The stores' own suite runs
 * unchanged against it; a multi-key operation whose keys were on two slots fails there with
 * CROSSSLOT, so passing it is what shows each operation's keys share a slot.
 */
let cluster: TestRedisCluster
let redis: RedisConnection
redisStoresSuite(async () => {
  cluster = await startRedisCluster()
  redis = await connectRedis({ cluster: cluster.urls })
  return { redis, stop: async () => { await redis.close().catch(() => {}); await cluster.stop() } }
})

describe('connectRedis({ cluster })', () => {
  it('connects to the cluster from its nodes and says so', () => {
    expect(redis.topology).toBe('cluster')
    expect(redis.pubsub).toBe('sharded')
  })
})

describe('Redis Cluster keys and channels', () => {
  it('refuses a script whose keys are on two slots (so the suite above would fail on keys without a shared tag)', async () => {
    await expect(redis.eval('return 1', { keys: ['rxmcp:task:a', 'rxmcp:task:b'], arguments: [] })).rejects.toThrow(/CROSSSLOT/)
  })

  it('spreads tasks over the primaries by owner, each owner\'s keys on one slot', async () => {
    const store = redisTaskStore(redis, { prefix: 'spread:' })
    const owners = Array.from({ length: 24 }, (_, n) => `owner-${n}`)
    for (const owner of owners) {
      await store.create({ owner })
      await store.create({ owner })
    }
    for (const owner of owners) expect((await store.list(owner)).tasks).toHaveLength(2)
    const keysByNode = await Promise.all(cluster.nodes.map(async node => (await redisCli(node.port, '--scan', '--pattern', 'spread:*')).split('\n').filter(Boolean)))
    // Every primary holds some owners' tasks: the store is sharded, not pinned to one slot.
    for (const keys of keysByNode) expect(keys.some(key => key.startsWith('spread:task:'))).toBe(true)
    // An owner's task, index and sequence are on the same node.
    for (const owner of owners) {
      const holders = keysByNode.map(keys => keys.some(key => key.includes(`{${owner}}`)))
      expect(holders.filter(Boolean)).toHaveLength(1)
    }
  })

  it('bounds tasks in all and per address across owners on different slots, giving back what an owner refused', async () => {
    const store = redisTaskStore(redis, { prefix: 'bounds:', maxTasks: 3, maxTasksPerOwner: 1, maxTasksPerAddress: 2 })
    await store.create({ owner: 'a', address: '10.0.0.1' })
    await store.create({ owner: 'b', address: '10.0.0.1' })
    await expect(store.create({ owner: 'c', address: '10.0.0.1' })).rejects.toMatchObject({ scope: 'address', limit: 2 })
    // Refused by its owner's bound: its place in the totals is given back...
    await expect(store.create({ owner: 'a' })).rejects.toMatchObject({ scope: 'owner', limit: 1 })
    // ...so the last place in all is still there for another owner.
    await store.create({ owner: 'd' })
    await expect(store.create({ owner: 'e' })).rejects.toMatchObject({ scope: 'store', limit: 3 })
    const deleted = (await store.list('d')).tasks[0]!
    expect(await store.delete(deleted.taskId, 'd')).toBe(true)
    await store.create({ owner: 'e' })
  })

  it('carries an instance\'s messages over sharded pub/sub (SSUBSCRIBE on the channel\'s shard, nothing on classic channels)', async () => {
    const sender = redisSessionCluster(redis, { prefix: 'shard:' })
    const receiver = redisSessionCluster(redis, { prefix: 'shard:' })
    const received: string[] = []
    const listening = receiver.messages.subscribe(text => received.push(text))
    try {
      await until('the receiver listening (its heartbeat)', () => sender.isAlive(receiver.instanceId))
      await until('a message delivered', async () => await sender.send(receiver.instanceId, 'hello') && received.includes('hello'))
      const channel = `shard:instance:${receiver.instanceId}`
      const counts = await Promise.all(cluster.nodes.map(async node => ({
        sharded: Number((await redisCli(node.port, 'PUBSUB', 'SHARDNUMSUB', channel)).trim().split('\n')[1]),
        classic: Number((await redisCli(node.port, 'PUBSUB', 'NUMSUB', channel)).trim().split('\n')[1]),
      })))
      expect(counts.map(count => count.sharded).sort()).toEqual([0, 0, 1])
      expect(counts.map(count => count.classic)).toEqual([0, 0, 0])
      // Session records are single keys, each on its own slot.
      await receiver.claim('s1', { owner: receiver.instanceId, principalKey: 'p', kind: 'streamable-http' }, 60_000)
      expect(await sender.lookup('s1')).toMatchObject({ owner: receiver.instanceId, kind: 'streamable-http' })
      expect(await receiver.touch('s1', 60_000)).toBe('held')
      expect(await sender.takeOver('s1', receiver.instanceId, 60_000)).toMatchObject({ owner: sender.instanceId })
      expect(await receiver.touch('s1', 60_000)).toBe('lost')
    } finally {
      listening.unsubscribe()
    }
    // Gone with its listening: the heartbeat key is deleted at once.
    await until('the receiver gone', async () => !(await sender.isAlive(receiver.instanceId)))
    expect(await sender.send(receiver.instanceId, 'late')).toBe(false)
  })

  it('keeps DPoP ids, used requestStates and rate-limit buckets on the cluster', async () => {
    const cache = redisReplayCache(redis, { prefix: 'sec:', maxEntriesPerKey: 2 })
    const until60s = Date.now() + 60_000
    expect(await cache.remember('id-1', until60s, 'key-a')).toEqual({ type: 'fresh' })
    expect(await cache.remember('id-1', until60s, 'key-a')).toEqual({ type: 'replayed' })
    expect(await cache.remember('id-2', until60s, 'key-a')).toEqual({ type: 'fresh' })
    expect(await cache.remember('id-3', until60s, 'key-a')).toMatchObject({ type: 'over-quota' })
    expect(await cache.remember('id-3', until60s, 'key-b')).toEqual({ type: 'fresh' })
    const states = redisRequestStateStore(redis, { prefix: 'sec:' })
    expect(await states.claim('state-1', until60s)).toBe(true)
    expect(await states.claim('state-1', until60s)).toBe(false)
    const errors: unknown[] = []
    const limiter = redisRateLimiterStore(redis, { prefix: 'sec:', onError: error => errors.push(error) }).limiter('calls', { capacity: 2, refillPerSecond: 0.001 })
    expect(await limiter.take('client')).toBe(0)
    expect(await limiter.take('client')).toBe(0)
    expect(await limiter.take('client')).toBeGreaterThan(0)
    // Answered by Redis, not by the per-instance fallback.
    expect(errors).toEqual([])
  })

  it('bounds the event store in all on the cluster with one shard (the default when a second would not fit a session\'s allowance)', async () => {
    const store = redisEventStore(redis, { prefix: 'ev:', maxStreams: 3 })
    for (const [stream, session] of [['s1', 'a'], ['s2', 'a'], ['s3', 'b'], ['s4', 'c']] as const) {
      await store.storeEvent(stream, { jsonrpc: '2.0', method: 'notifications/message', params: {} }, { sessionId: session })
    }
    expect((await store.stats()).streams).toBe(3)
    expect(await store.hasStream!('a', 's1')).toBe(false)
    await store.deleteSession!('b')
    expect(await store.stats()).toMatchObject({ streams: 2, sessions: 2 })
  })
})

describe('redisEventStore on the cluster: sessions sharded over the primaries', () => {
  /** Each node's INFO commandstats calls of `command` (XADD: an event stored). */
  const callsOf = (command: string) => Promise.all(cluster.nodes.map(async node =>
    Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await redisCli(node.port, 'INFO', 'commandstats'))?.[1] ?? 0)))
  /** The shard an event id names. */
  const shardOfId = (id: string) => Number(/_(\d+)\.\d+-\d+$/.exec(id)![1])
  const message = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/progress', params: { progressToken: 't', progress: n } })

  it('puts each session\'s keys on one slot, its shard\'s, and the shards\' slots on every primary; another instance replays each', async () => {
    const store = redisEventStore(redis, { prefix: 'sharded:' })
    expect(store.shards).toBe(8)
    const sessions = Array.from({ length: 24 }, (_, n) => `session-${n}`)
    const before = await callsOf('xadd')
    const ids = new Map<string, string[]>()
    for (const session of sessions) {
      const own: string[] = []
      for (let n = 0; n < 4; n++) own.push(await store.storeEvent(`${session}-stream`, message(n), { sessionId: session }))
      ids.set(session, own)
    }
    const written = (await callsOf('xadd')).map((after, index) => after - before[index]!)
    console.log(`24 sessions' events (XADD) on each primary: ${written.join(' / ')}`)
    // Eight shards by default on a cluster (the default bounds fit eight sessions' allowances)...
    expect(new Set([...ids.values()].flat().map(shardOfId))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7]))
    // ...and every primary stores events: the store is not pinned to one.
    expect(written.reduce((sum, each) => sum + each, 0)).toBe(24 * 4)
    for (const each of written) expect(each).toBeGreaterThan(0)
    const keysByNode = await Promise.all(cluster.nodes.map(async node => (await redisCli(node.port, '--scan', '--pattern', 'sharded:*')).split('\n').filter(Boolean)))
    for (const session of sessions) {
      const keys = keysByNode.flat().filter(key => key.endsWith(`:${session}`) || key.endsWith(`:${session}-stream`))
      // Its events, its stream's meta, its counters and its streams' index: on one node, one slot,
      // and the slot the shard of its event ids is on (Redis's CLUSTER KEYSLOT agrees with ours).
      expect(keys).toHaveLength(4)
      expect(keysByNode.filter(onNode => keys.some(key => onNode.includes(key)))).toHaveLength(1)
      const slots = new Set(await Promise.all(keys.map(async key => Number(await redisCli(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', key)))))
      expect(slots).toEqual(new Set([redisSlot(keys[0]!)]))
    }
    // Another instance's store (same prefix, same default) replays every session from its shard.
    const other = redisEventStore(redis, { prefix: 'sharded:' })
    for (const [session, own] of ids) {
      const replayed: string[] = []
      expect(await other.replayEventsAfter(own[0]!, id => { replayed.push(id) })).toBe(`${session}-stream`)
      expect(replayed).toEqual(own.slice(1))
      expect(await other.hasStream!(session, `${session}-stream`)).toBe(true)
      await other.deleteSession!(session)
    }
    expect(await store.stats()).toEqual({ streams: 0, sessions: 0, bytes: 0 })
  })

  it('resumes streams with Last-Event-ID over HTTP for sessions in shards on every primary', async () => {
    const mcp = resumableServer()
    // Session ids chosen by the test, so which shard (and primary) each session is on is fixed.
    let sessionCount = 0
    const http = streamableHttp({ eventStore: redisEventStore(redis, { prefix: 'resumed:' }), retryMs: 10, sessionIdGenerator: () => `http-session-${++sessionCount}` })
    await mcp.listen(http)
    const before = await callsOf('xadd')
    try {
      const results = await Promise.all(Array.from({ length: 8 }, async () => {
        const client = await connect(streamableHttpClient(http.url!), { name: 'c', version: '1' }, { era: 'legacy' })
        try {
          const progress: number[] = []
          const result = await client.callTool('steps', {}, { onProgress: event => progress.push(event.progress) })
          return { text: result.content, progress }
        } finally {
          await client.close()
        }
      }))
      for (const result of results) expect(result).toEqual({ text: [{ type: 'text', text: 'all steps' }], progress: [1, 2, 3, 4] })
      // The eight sessions' events were stored on every primary.
      const written = (await callsOf('xadd')).map((after, index) => after - before[index]!)
      console.log(`8 HTTP sessions' events (XADD) on each primary: ${written.join(' / ')}`)
      for (const each of written) expect(each).toBeGreaterThan(0)
    } finally {
      await mcp.close()
    }
  })
})
