import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { VirtualTimeScheduler } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpOptions, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { connectRedis, redisRateLimiterStore, redisScaleOut, type RedisConnection, type RedisScaleOut } from '../../transports/redis.ts'
import type { Authenticator } from '../../lib/auth.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'

/** Rate limits shared through a real redis-server (Debian's package), started for this file. */
let server: TestRedis
let redis: RedisConnection
let prefixCount = 0
/** A fresh key prefix per test, so tests share the server and nothing else. */
const prefix = () => `rl${++prefixCount}:`

beforeAll(async () => {
  server = await startRedis()
  redis = await connectRedis(server.url)
}, 30_000)
afterAll(async () => {
  await redis?.close()
  await server?.stop()
})

/** Instances of the tests: each an MCP server on its own listener and Redis scale-out. */
let instances: { mcp: McpServer; http: StreamableHttpServer; scale: RedisScaleOut }[] = []
afterEach(async () => {
  for (const { mcp, http, scale } of instances) { await mcp.close(); await http.close(); await scale.close() }
  instances = []
})

/** One instance of a scale-out: built from `redisScaleOut(url).http`, plus `options`. */
async function instance(keyPrefix: string, options: StreamableHttpOptions): Promise<string> {
  const scale = await redisScaleOut(server.url, { prefix: keyPrefix })
  const mcp = createServer({ name: 'rate', version: '1' }, { ...scale.server })
  mcp.tool('echo', {}, () => ({ content: [{ type: 'text', text: 'ok' }] }))
  const http = streamableHttp({ port: 0, ...scale.http, ...options })
  await mcp.listen(http)
  instances.push({ mcp, http, scale })
  return http.url!
}

let nextId = 1

/** A modern-era tools/list POST; its status. */
async function list(url: string, headers: Record<string, string> = {}): Promise<number> {
  const body = { jsonrpc: '2.0', id: nextId++, method: 'tools/list', params: { _meta: { [MetaKey.protocolVersion]: '2026-07-28', [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: { name: 'rate', version: '1' } } } }
  const response = await fetch(url, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list', ...headers },
  })
  await response.text()
  return response.status
}

describe('issue 20: unbounded per-client resources and per-process limits (rate limits per process)', () => {
  it('gives two instances built from redisScaleOut one rateLimit budget in total, not one each', async () => {
    // Clocks that do not move: no token comes back during the test.
    const options = (): StreamableHttpOptions => ({ rateLimit: { capacity: 5, refillPerSecond: 1 }, scheduler: new VirtualTimeScheduler(undefined, 0) })
    const keyPrefix = prefix()
    const urls = [await instance(keyPrefix, options()), await instance(keyPrefix, options())]
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push(await list(urls[i % 2]!))
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429])
  })

  it('gives two instances one failed-authentication budget per address in total', async () => {
    const auth: Authenticator = {
      authenticate: async () => ({ type: 'refuse', answer: { status: 401, headers: { 'www-authenticate': 'Bearer' }, body: '' } }),
    }
    const options = (): StreamableHttpOptions => ({ auth, failedAuthLimit: { capacity: 3, refillPerSecond: 1 }, scheduler: new VirtualTimeScheduler(undefined, 0) })
    const keyPrefix = prefix()
    const urls = [await instance(keyPrefix, options()), await instance(keyPrefix, options())]
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push(await list(urls[i % 2]!, { authorization: 'Bearer forged' }))
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429])
  })
})

describe('redisRateLimiterStore', () => {
  it('takes tokens atomically: 50 concurrent takes of a 20-token bucket admit exactly 20', async () => {
    const limiter = redisRateLimiterStore(redis, { prefix: prefix() }).limiter('requests', { capacity: 20, refillPerSecond: 1, now: () => 1_000 })
    const waits = await Promise.all(Array.from({ length: 50 }, () => limiter.take('address:10.0.0.1')))
    expect(waits.filter(wait => wait === 0)).toHaveLength(20)
    // The 21st token is 1 s away at 1 token a second.
    expect(waits.filter(wait => wait > 0).every(wait => wait === 1000)).toBe(true)
  })

  it('refills on the caller\'s clock, never backwards, and lets a bucket expire once it would be full', async () => {
    let now = 10_000
    const keyPrefix = prefix()
    const limiter = redisRateLimiterStore(redis, { prefix: keyPrefix }).limiter('requests', { capacity: 2, refillPerSecond: 2, now: () => now })
    expect(await limiter.take('k', 2)).toBe(0)
    expect(await limiter.take('k')).toBe(500)
    // A clock behind the last count (another instance's, skewed) mints nothing.
    now = 5_000
    expect(await limiter.take('k')).toBe(500)
    now = 10_500
    expect(await limiter.take('k')).toBe(0)
    // Empty again: full after 1 s at 2 a second; the key lives that long and a second more.
    const ttl = Number(await redis.eval('return redis.call("PTTL", KEYS[1])', { keys: [`${keyPrefix}rate:requests:k`], arguments: [] }))
    expect(ttl).toBeGreaterThan(1_000)
    expect(ttl).toBeLessThanOrEqual(2_000)
  })

  it('keeps budgets of different names and prefixes apart', async () => {
    const keyPrefix = prefix()
    const bucket = { capacity: 1, refillPerSecond: 1, now: () => 0 }
    const requests = redisRateLimiterStore(redis, { prefix: keyPrefix }).limiter('requests', bucket)
    const failures = redisRateLimiterStore(redis, { prefix: keyPrefix }).limiter('auth-failures', bucket)
    const other = redisRateLimiterStore(redis, { prefix: prefix() }).limiter('requests', bucket)
    expect(await requests.take('k')).toBe(0)
    expect(await requests.take('k')).toBeGreaterThan(0)
    expect(await failures.take('k')).toBe(0)
    expect(await other.take('k')).toBe(0)
  })

  it('answers from a bucket in this process\'s memory while Redis cannot be reached, and reports the error', async () => {
    const errors: unknown[] = []
    const down = { eval: () => Promise.reject(new Error('The client is closed')) }
    const limiter = redisRateLimiterStore(down, { onError: error => errors.push(error) }).limiter('requests', { capacity: 2, refillPerSecond: 1, now: () => 0 })
    expect(await limiter.take('k')).toBe(0)
    expect(await limiter.take('k')).toBe(0)
    expect(await limiter.take('k')).toBe(1000)
    expect(errors).toHaveLength(3)
    expect(errors[0]).toBeInstanceOf(Error)
  })

  it('refuses a bucket that could never admit anything', () => {
    const store = redisRateLimiterStore(redis)
    expect(() => store.limiter('requests', { capacity: 0, refillPerSecond: 1 })).toThrow(RangeError)
    expect(() => store.limiter('requests', { capacity: 1, refillPerSecond: 0 })).toThrow(RangeError)
  })
})
