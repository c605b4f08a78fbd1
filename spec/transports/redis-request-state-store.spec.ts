import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { connectRedis, redisRequestStateStore, REDIS_REQUEST_STATE_STORE_DEFAULTS, type RedisConnection } from '../../transports/redis.ts'
import { ErrorCode, McpError, RateLimitedError } from '../../lib/jsonrpc/errors.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { events, messages } from '../helpers/sse-events.ts'

/**
 * The Redis store of used MRTR `requestState`s on a real redis-server: `SET NX PXAT`, the first
 * claim wins; a Redis that is full (maxmemory, noeviction) or down refuses the retry, never lets
 * it through.
 */

let redisServer: TestRedis
let redis: RedisConnection
beforeAll(async () => {
  redisServer = await startRedis()
  redis = await connectRedis(redisServer.url)
}, 30_000)
afterAll(async () => {
  await redis?.close()
  await redisServer?.stop()
})

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

/** Drops a connection whose Redis was killed at once (close() would wait for it to come back). */
const destroy = async (connection: RedisConnection) => { (connection as unknown as { destroy(): void }).destroy() }

/** CONFIG SET on a node-redis connection (not part of RedisLike). */
const configSet = (connection: RedisConnection, name: string, value: string) => (connection as unknown as { configSet(name: string, value: string): Promise<unknown> }).configSet(name, value)

describe('redisRequestStateStore', () => {
  it('lets the first claim of an id through and refuses every later one, from any client of the Redis', async () => {
    const prefix = `rs-${randomUUID()}:`
    const other = await connectRedis(redisServer.url)
    cleanup.push(() => other.close())
    const a = redisRequestStateStore(redis, { prefix })
    const b = redisRequestStateStore(other, { prefix })
    const expiresAt = Date.now() + 600_000
    expect(await a.claim('one', expiresAt)).toBe(true)
    expect(await b.claim('one', expiresAt)).toBe(false)
    expect(await a.claim('one', expiresAt)).toBe(false)
    expect(await b.claim('two', expiresAt)).toBe(true)
    // Another prefix is another server sharing the Redis.
    expect(await redisRequestStateStore(redis, { prefix: `${prefix}other:` }).claim('one', expiresAt)).toBe(true)
  })

  it('keeps a used id until its state expires plus clockSkewMs (60 s by default), then Redis drops it', async () => {
    expect(REDIS_REQUEST_STATE_STORE_DEFAULTS).toEqual({ prefix: 'rxmcp:', clockSkewMs: 60_000, fullRetryAfterMs: 5_000 })
    const prefix = `rs-${randomUUID()}:`
    const expiresAt = Date.now() + 600_000
    await redisRequestStateStore(redis, { prefix }).claim('kept', expiresAt)
    await redisRequestStateStore(redis, { prefix, clockSkewMs: 0 }).claim('exact', expiresAt)
    const expiry = (key: string) => redis.eval(`return redis.call('PEXPIRETIME', KEYS[1])`, { keys: [key], arguments: [] })
    expect(await expiry(`${prefix}request-state:kept`)).toBe(expiresAt + 60_000)
    expect(await expiry(`${prefix}request-state:exact`)).toBe(expiresAt)
    expect(() => redisRequestStateStore(redis, { clockSkewMs: -1 })).toThrow(RangeError)
  })

  it('refuses (-32029, retryAfterMs) rather than write past a Redis at its maxmemory, a used id included', async () => {
    const own = await startRedis()
    const connection = await connectRedis(own.url)
    cleanup.push(() => own.stop(), () => connection.close())
    const store = redisRequestStateStore(connection)
    const expiresAt = Date.now() + 600_000
    expect(await store.claim('before', expiresAt)).toBe(true)
    await configSet(connection, 'maxmemory-policy', 'noeviction')
    await configSet(connection, 'maxmemory', '1')
    for (const id of ['during', 'before']) {
      const refusal = await Promise.resolve(store.claim(id, expiresAt)).then(() => undefined, (error: unknown) => error)
      expect(refusal).toBeInstanceOf(RateLimitedError)
      expect(refusal).toMatchObject({ code: ErrorCode.RateLimited, data: { retryAfterMs: 5_000 } })
    }
    await configSet(connection, 'maxmemory', '0')
    expect(await store.claim('during', expiresAt)).toBe(true)
    expect(await store.claim('before', expiresAt)).toBe(false)
  })

  it('refuses (-32603) when Redis cannot be reached', async () => {
    const own = await startRedis()
    const connection = await connectRedis(own.url)
    cleanup.push(() => own.stop(), () => destroy(connection))
    const store = redisRequestStateStore(connection)
    await own.kill()
    const refusal = await Promise.resolve(store.claim('any', Date.now() + 600_000)).then(() => undefined, (error: unknown) => error)
    expect(refusal).toBeInstanceOf(McpError)
    expect(refusal).toMatchObject({ code: ErrorCode.InternalError, message: 'Internal error: the record of used requestStates cannot be reached; retry later' })
  })
})

describe('issue 20: a requestState can be replayed (a Redis store that cannot answer)', { timeout: 30_000 }, () => {
  let mcp: McpServer | undefined
  afterEach(async () => { await mcp?.close(); mcp = undefined })

  it('answers a retry with an error and never runs what follows the input while Redis is full, then down', async () => {
    const own = await startRedis()
    const connection = await connectRedis(own.url)
    cleanup.push(() => own.stop(), () => destroy(connection))
    const server = createServer({ name: 'bank', version: '1' }, { requestStateStore: redisRequestStateStore(connection) })
    mcp = server
    const transfers: unknown[] = []
    server.tool('transfer', {}, async (_args, ctx) => {
      await ctx.elicit({ mode: 'form', message: 'Send it?', requestedSchema: { type: 'object', properties: {} } }, { key: 'confirm' })
      transfers.push('sent')
      return { content: [{ type: 'text', text: 'sent' }] }
    })
    const http = streamableHttp({ port: 0 })
    await server.listen(http)
    const meta = { [MetaKey.protocolVersion]: '2026-07-28', [MetaKey.clientCapabilities]: { elicitation: { form: {} } }, [MetaKey.clientInfo]: { name: 'c', version: '1' } }
    const call = async (params: JsonObject): Promise<JsonObject> => {
      const response = await fetch(http.url!, {
        method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'transfer', _meta: meta, ...params } }),
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'transfer' },
      })
      return response.headers.get('content-type')?.includes('text/event-stream') ? messages(await events(response)).at(-1) : await response.json()
    }
    const round = await call({})
    const retry = { inputResponses: { confirm: { action: 'accept', content: {} } }, requestState: (round.result as JsonObject).requestState }
    await configSet(connection, 'maxmemory-policy', 'noeviction')
    await configSet(connection, 'maxmemory', '1')
    expect((await call(retry)).error).toMatchObject({ code: ErrorCode.RateLimited, data: { retryAfterMs: 5_000 } })
    await own.kill()
    expect((await call(retry)).error).toMatchObject({ code: ErrorCode.InternalError })
    expect(transfers).toEqual([])
  })
})
