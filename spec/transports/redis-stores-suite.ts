/**
 * The Redis stores' behaviour, against whatever Redis `deploy` starts: a redis-server
 * (redis-stores.spec.ts) or a Redis Cluster of three primaries (redis-cluster-stores.spec.ts). The
 * same cases pass on both: that is what proves the keys of each operation share a slot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sharedRequestStateKey, type RedisConnection } from '../../transports/redis.ts'
import { redisEventStore } from '../../transports/redis-event-store.ts'
import { redisTaskStore } from '../../transports/redis-task-store.ts'
import { redisEventBus, type RedisPubSubLike } from '../../transports/redis-event-bus.ts'
import { firstValueFrom } from 'rxjs'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { createServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { TaskStoreFullError } from '../../actors/tasks/store.ts'
import { TaskTransitionError } from '../../actors/tasks/task.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import type { JsonRpcPayload } from '../../lib/jsonrpc/message.ts'

/**
 * A server whose tool `steps` sends progress 1 and 2, closes its stream, then sends 3 and 4 and
 * answers 'all steps': the client gets 3, 4 and the answer only by resuming with Last-Event-ID.
 */
export function resumableServer() {
  const mcp = createServer({ name: 'resumable', version: '1' })
  mcp.tool('steps', {}, (_args, ctx) => {
    ctx.progress(1, 4)
    ctx.progress(2, 4)
    // The stream ends here; the client comes back with Last-Event-ID and gets the rest from Redis.
    ctx.closeStream()
    ctx.progress(3, 4)
    ctx.progress(4, 4)
    return { content: [{ type: 'text', text: 'all steps' }] }
  })
  return mcp
}

/** A Redis for the suite: connected once per file, stopped after. */
export interface SuiteRedis { redis: RedisConnection; stop(): Promise<void> }

export function redisStoresSuite(deploy: () => Promise<SuiteRedis>): void {
  let deployed: SuiteRedis | undefined
  let redis: RedisConnection
  let prefixCount = 0
  /** A fresh key prefix per test, so tests share the server and nothing else. */
  const prefix = () => `t${++prefixCount}:`

  beforeAll(async () => {
    deployed = await deploy()
    redis = deployed.redis
  }, 60_000)
  afterAll(async () => {
    await deployed?.stop()
  })

  const message = (n: number): JsonRpcPayload => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: n } })

  // One shard (the whole store on one slot) and three (each session in the shard its id hashes to).
  describe.each([1, 3])('redisEventStore with %i shard(s)', shards => {
    it('stores events as a Redis stream and replays exactly those after an id, in order', async () => {
      const store = redisEventStore(redis, { prefix: prefix(), shards })
      const ids: string[] = []
      for (let n = 1; n <= 5; n++) ids.push(await store.storeEvent('s1', message(n), { sessionId: 'a' }))
      await store.storeEvent('s2', message(99), { sessionId: 'a' })
      // The id names its stream, and its shard when there are several.
      for (const id of ids) expect(id).toMatch(shards === 1 ? /^s1_\d+-\d+$/ : /^s1_[0-2]\.\d+-\d+$/)
      const replayed: [string, JsonRpcPayload][] = []
      expect(await store.replayEventsAfter(ids[1]!, (id, event) => { replayed.push([id, event]) })).toBe('s1')
      expect(replayed).toEqual([[ids[2], message(3)], [ids[3], message(4)], [ids[4], message(5)]])
      // Another store on the same Redis (another instance) replays the same.
      const again: string[] = []
      await redisEventStore(redis, { prefix: `t${prefixCount}:`, shards }).replayEventsAfter(ids[3]!, id => { again.push(id) })
      expect(again).toEqual([ids[4]])
    })

    it('refuses unknown, forged and trimmed ids, and forgets a session\'s streams', async () => {
      const store = redisEventStore(redis, { prefix: prefix(), maxEventsPerStream: 10, shards })
      const first = await store.storeEvent('s1', message(0), { sessionId: 'a' })
      for (let n = 1; n <= 300; n++) await store.storeEvent('s1', message(n), { sessionId: 'a' })
      const none = () => { throw new Error('nothing may be replayed') }
      // The first event was trimmed away: a replay from it would have a gap.
      expect(await store.replayEventsAfter(first, none)).toBeUndefined()
      for (const forged of ['nope', 's1_', 's1_abc', '_1-0', 'other_1-0', 's1_9.1-0', 's1_01.1-0', `${first.slice(0, first.indexOf('_'))}_x${first.slice(first.indexOf('_') + 1)}`]) expect(await store.replayEventsAfter(forged, none), forged).toBeUndefined()
      const last = await store.storeEvent('s1', message(301), { sessionId: 'a' })
      await store.deleteSession!('a')
      expect(await store.replayEventsAfter(last, none)).toBeUndefined()
    })

    it('serves Last-Event-ID resumption over HTTP from Redis: a stream closed mid-call is resumed with nothing lost or repeated', async () => {
      const keyPrefix = prefix()
      const mcp = resumableServer()
      const http = streamableHttp({ eventStore: redisEventStore(redis, { prefix: keyPrefix, shards }), retryMs: 10 })
      await mcp.listen(http)
      const client = await connect(streamableHttpClient(http.url!), { name: 'c', version: '1' })
      try {
        const progress: number[] = []
        const result = await client.callTool('steps', {}, { onProgress: event => progress.push(event.progress) })
        expect(result.content).toEqual([{ type: 'text', text: 'all steps' }])
        expect(progress).toEqual([1, 2, 3, 4])
      } finally {
        await client.close()
        await mcp.close()
      }
    })
  })

  describe('redisTaskStore', () => {
    it('creates, reads (owner only), updates by the state machine, lists in pages, deletes', async () => {
      const store = redisTaskStore(redis, { prefix: prefix(), pageSize: 2 })
      const a = await store.create({ owner: 'alice', ttlMs: 60_000, statusMessage: 'started' })
      expect(a).toMatchObject({ status: 'working', owner: 'alice', ttlMs: 60_000, statusMessage: 'started' })
      expect(a.taskId).toMatch(/^[A-Za-z0-9_-]{22}$/)
      expect(await store.get(a.taskId, 'bob')).toBeUndefined()
      expect(await store.get(a.taskId, 'alice')).toEqual(a)
      const done = await store.update({ ...a, status: 'completed', lastUpdatedAt: a.createdAt + 5, result: { content: [] } })
      expect(await store.get(a.taskId, 'alice')).toEqual(done)
      await expect(store.update({ ...done, status: 'working' })).rejects.toBeInstanceOf(TaskTransitionError)
      await expect(store.update({ ...done, owner: 'bob', status: 'cancelled' })).rejects.toBeInstanceOf(InvalidParamsError)
      const more = [await store.create({ owner: 'alice' }), await store.create({ owner: 'alice' }), await store.create({ owner: 'bob' })]
      const page1 = await store.list('alice')
      expect(page1.tasks.map(task => task.taskId)).toEqual([a.taskId, more[0]!.taskId])
      const page2 = await store.list('alice', page1.nextCursor)
      expect(page2).toEqual({ tasks: [expect.objectContaining({ taskId: more[1]!.taskId })] })
      await expect(store.list('alice', 'forged')).rejects.toBeInstanceOf(InvalidParamsError)
      expect(await store.delete(a.taskId, 'bob')).toBe(false)
      expect(await store.delete(a.taskId, 'alice')).toBe(true)
      expect((await store.list('alice')).tasks.map(task => task.taskId)).toEqual([more[0]!.taskId, more[1]!.taskId])
    })

    it('bounds tasks per owner and in all, and a task expires with its ttl', async () => {
      const store = redisTaskStore(redis, { prefix: prefix(), maxTasksPerOwner: 2, maxTasks: 3 })
      await store.create({ owner: 'a' })
      await store.create({ owner: 'a' })
      await expect(store.create({ owner: 'a' })).rejects.toBeInstanceOf(TaskStoreFullError)
      await store.create({ owner: 'b' })
      await expect(store.create({ owner: 'c' })).rejects.toMatchObject({ scope: 'store', limit: 3 })
      const short = await redisTaskStore(redis, { prefix: prefix() }).create({ owner: 'x', ttlMs: 50 })
      const reader = redisTaskStore(redis, { prefix: `t${prefixCount}:` })
      const end = Date.now() + 5000
      while (await reader.get(short.taskId, 'x') !== undefined) {
        if (Date.now() > end) throw new Error('the task did not expire')
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    })

    it('keeps tasks across server instances: one server creates a task, another (a restart) answers for it', async () => {
      const keyPrefix = prefix()
      const makeServer = () => {
        const mcp = createServer({ name: 'durable', version: '1' }, { tasks: { store: redisTaskStore(redis, { prefix: keyPrefix }) } })
        mcp.tool('job', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'done by the first' }] }))
        return mcp
      }
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } }
      const call = async (url: string, method: string, params: Record<string, unknown>, name: string) => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
        })
        const text = await response.text()
        const json = text.startsWith('{') ? text : text.split('\n').filter(line => line.startsWith('data: {')).at(-1)!.slice(6)
        return JSON.parse(json) as { result?: Record<string, unknown> }
      }
      const first = makeServer()
      const firstHttp = streamableHttp()
      await first.listen(firstHttp)
      const created = await call(firstHttp.url!, 'tools/call', { name: 'job', arguments: {} }, 'job')
      const taskId = created.result!.taskId as string
      const end = Date.now() + 10_000
      while ((await call(firstHttp.url!, 'tasks/get', { taskId }, taskId)).result?.status !== 'completed') {
        if (Date.now() > end) throw new Error('the task did not complete')
      }
      await first.close()
      const second = makeServer()
      const secondHttp = streamableHttp()
      await second.listen(secondHttp)
      try {
        const read = await call(secondHttp.url!, 'tasks/get', { taskId }, taskId)
        expect(read.result).toMatchObject({ taskId, status: 'completed', result: { content: [{ type: 'text', text: 'done by the first' }] } })
      } finally {
        await second.close()
      }
    })
  })

  describe('redisEventBus', () => {
    it('fans a resource update and a task\'s changes raised on one instance out to the sessions and listen streams of another', async () => {
      const keyPrefix = prefix()
      const channel = `${keyPrefix}events`
      const instances = [0, 1].map(() => {
        const mcp = createServer({ name: 'fanned', version: '1' }, { eventBus: redisEventBus(redis as unknown as RedisPubSubLike, { channel }), tasks: { store: redisTaskStore(redis, { prefix: keyPrefix }) } })
        mcp.resource('memo://shared', { name: 'shared' }, () => 'v')
        mcp.tool('job', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'done' }] }))
        return mcp
      })
      const [a, b] = instances as [ReturnType<typeof createServer>, ReturnType<typeof createServer>]
      const httpA = streamableHttp()
      const httpB = streamableHttp()
      await a.listen(httpA)
      await b.listen(httpB)
      const client = await connect(streamableHttpClient(httpB.url!), { name: 'c', version: '1' }, { era: 'legacy' })
      try {
        await client.subscribeResource('memo://shared')
        const updated = firstValueFrom(client.notifications('notifications/resources/updated'))
        // The subscriber connection of b may still be opening: publish until it hears.
        const until = Date.now() + 10_000
        let heard: unknown
        updated.then(value => { heard = value })
        while (heard === undefined) {
          if (Date.now() > until) throw new Error('instance b never heard of the update on instance a')
          a.notifyResourceUpdated('memo://shared')
          await new Promise(resolve => setTimeout(resolve, 50))
        }
        expect(heard).toEqual({ uri: 'memo://shared' })
        // A task made on a is seen changing by b's bus, as b's own would be.
        const seen: string[] = []
        let heardCompleted!: () => void
        const completed = new Promise<void>(resolve => { heardCompleted = resolve })
        const watching = b.events.subscribe(event => {
          if (event.type !== 'task') return
          seen.push(event.task.status)
          if (event.task.status === 'completed') heardCompleted()
        })
        const created = await fetch(httpA.url!, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'job' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'job', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } } } }),
        })
        await created.text()
        await completed
        watching.unsubscribe()
      } finally {
        await client.close()
        await a.close()
        await b.close()
      }
    })
  })

  describe('sharedRequestStateKey', () => {
    it('gives every instance the same key, so an input round started on one completes on another', async () => {
      const keyName = `${prefix()}request-state-key`
      const keys = await Promise.all([sharedRequestStateKey(redis, keyName), sharedRequestStateKey(redis, keyName)])
      expect(keys[0]).toBe(keys[1])
      expect(keys[0]).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const instance = (requestStateKey?: string) => {
        const mcp = createServer({ name: 'mrtr', version: '1' }, { requestStateKey })
        mcp.tool('ask', {}, async (_args, ctx) => {
          const answer = await ctx.elicit({ message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
          return { content: [{ type: 'text', text: `hello ${(answer.content as { name: string }).name}` }] }
        })
        return mcp
      }
      const servers = [instance(keys[0]), instance(keys[1]), instance()]
      const urls: string[] = []
      for (const mcp of servers) { const http = streamableHttp(); await mcp.listen(http); urls.push(http.url!) }
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } }
      const ask = async (url: string, extra: Record<string, unknown>) => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'ask' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: {}, ...extra, _meta: meta } }),
        })
        return await response.json() as { result?: { resultType?: string; requestState?: string; inputRequests?: Record<string, unknown>; content?: unknown }; error?: { code: number } }
      }
      try {
        const first = await ask(urls[0]!, {})
        expect(first.result?.resultType).toBe('input_required')
        const [inputKey] = Object.keys(first.result!.inputRequests!)
        const retry = { requestState: first.result!.requestState, inputResponses: { [inputKey!]: { action: 'accept', content: { name: 'Ada' } } } }
        expect((await ask(urls[1]!, retry)).result?.content).toEqual([{ type: 'text', text: 'hello Ada' }])
        // An instance with a key of its own cannot open it.
        expect((await ask(urls[2]!, retry)).error?.code).toBe(-32602)
      } finally {
        for (const mcp of servers) await mcp.close()
      }
    })
  })
}
