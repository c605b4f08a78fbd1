import { afterAll, beforeAll, expect, it } from 'vitest'
import { asyncScheduler, type SchedulerLike } from 'rxjs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { redisScaleOut, type RedisScaleOut } from '../../transports/redis.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'

/**
 * 10,000 sessions across three instances on one redis-server, then all idle past their timeout:
 * each instance ends its sessions and frees them in Redis too, so Redis's memory and the heap
 * come back near where they started. The numbers are printed.
 */
const SESSIONS = 10_000
const IDLE_MS = 60_000

/**
 * The listeners' idle clock: standing still (opening 10,000 sessions on a loaded machine may take
 * longer than their idle timeout, which must not end the first ones early), moved past the idle
 * timeout at once when the test says so. The sweeps themselves run on real time, every second.
 */
let skew = 0
const base = Date.now()
const clock = { now: () => base + skew, schedule: asyncScheduler.schedule.bind(asyncScheduler) } as SchedulerLike

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

interface Instance { scale: RedisScaleOut; server: McpServer; http: StreamableHttpServer }
let redis: TestRedis
const instances: Instance[] = []

beforeAll(async () => {
  redis = await startRedis()
  for (let i = 0; i < 3; i++) {
    const scale = await redisScaleOut(redis.url, { prefix: 'idle:' })
    const server = createServer({ name: 'idle', version: '1' }, { ...scale.server })
    server.tool('echo', {}, () => ({ content: [{ type: 'text', text: 'ok' }] }))
    // Swept every second (keepAliveMs sets the tick), on the clock above. Every session comes
    // through 127.0.0.1: one client, allowed them all.
    const http = streamableHttp({ ...scale.http, sessionIdleTimeout: IDLE_MS, maxSessions: SESSIONS, maxSessionsPerClient: SESSIONS, keepAliveMs: 1_000, scheduler: clock })
    await server.listen(http)
    instances.push({ scale, server, http })
  }
}, 30_000)

afterAll(async () => {
  for (const instance of instances) {
    await instance.server.close().catch(() => {})
    await instance.http.close().catch(() => {})
    await instance.scale.close()
  }
  await redis?.stop()
})

type Info = { info(section: string): Promise<string>; dbSize(): Promise<number> }
const client = () => instances[0]!.scale.redis as unknown as Info
async function redisBytes(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await client().info('memory'))![1])
}
function heap(): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`
const sessionCount = () => instances.reduce((sum, instance) => sum + instance.http.sessionCount, 0)

async function openSession(index: number): Promise<void> {
  const url = instances[index % 3]!.http.url!
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: `c${index}`, version: '1' } } }) })
  const sessionId = init.headers.get('mcp-session-id')!
  await init.text()
  // Initialized through another instance (forwarded to the one holding the session).
  const done = await fetch(instances[(index + 1) % 3]!.http.url!, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  await done.text()
  if (done.status !== 202) throw new Error(`notifications/initialized answered ${done.status}`)
}

it(`${SESSIONS} sessions across three instances, all idle past their timeout: Redis and the heap come back`, async () => {
  const startRedisBytes = await redisBytes()
  const startKeys = await client().dbSize()
  const startHeap = heap()
  const started = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: 32 }, async () => { while (next < SESSIONS) await openSession(next++) }))
  const openMs = performance.now() - started
  expect(sessionCount()).toBe(SESSIONS)
  const peakRedisBytes = await redisBytes()
  const peakKeys = await client().dbSize()
  const peakHeap = heap()
  expect(peakKeys - startKeys).toBeGreaterThanOrEqual(SESSIONS)

  // Idle past the timeout: each instance's next sweep ends its sessions (bounded wait).
  skew += IDLE_MS + 1_000
  const end = Date.now() + 60_000
  while (sessionCount() > 0 || (await client().dbSize()) > startKeys) {
    if (Date.now() > end) throw new Error(`still ${sessionCount()} sessions, ${await client().dbSize()} keys`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  const afterRedisBytes = await redisBytes()
  const afterHeap = heap()
  console.log([
    `${SESSIONS} sessions opened in ${Math.round(openMs)} ms across 3 instances (initialize on one, initialized through another)`,
    `redis used_memory: start ${mib(startRedisBytes)}, with the sessions ${mib(peakRedisBytes)} (${Math.round((peakRedisBytes - startRedisBytes) / SESSIONS)} B per session, ${peakKeys - startKeys} keys), after the idle timeout ${mib(afterRedisBytes)}`,
    `heap of the three instances: start ${mib(startHeap)}, with the sessions ${mib(peakHeap)} (${Math.round((peakHeap - startHeap) / SESSIONS)} B per session), after ${mib(afterHeap)}`,
  ].join('\n'))
  expect(await client().dbSize()).toBe(startKeys)
  // Back near the start: Redis within a tenth of what the sessions took, the heap within a fifth
  // (what stays is code compiled meanwhile and the HTTP clients' pools, not sessions).
  expect(afterRedisBytes - startRedisBytes).toBeLessThan((peakRedisBytes - startRedisBytes) / 10)
  expect(afterHeap - startHeap).toBeLessThan((peakHeap - startHeap) / 5)
}, 180_000)

it('an active session whose record went is written again; one another instance took over is dropped here', async () => {
  const redisClient = instances[0]!.scale.redis as unknown as { del(key: string): Promise<number>; hGet(key: string, field: string): Promise<string | null>; hSet(key: string, field: string, value: string): Promise<number> }
  const url = instances[0]!.http.url!
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
  const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }) })
  const sessionId = init.headers.get('mcp-session-id')!
  await init.text()
  const record = `idle:session:${sessionId}`
  const ping = async () => {
    const response = await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) })
    await response.text()
    return response.status
  }
  /** Waits (bounded) for `check` to hold. */
  const until = async (check: () => Promise<boolean>, what: string) => {
    const end = Date.now() + 10_000
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  }
  expect(await redisClient.hGet(record, 'o')).toBe(instances[0]!.scale.instanceId)
  // Redis lost the record without an outage being seen: the next touch (a quarter of its life on) writes it again.
  await redisClient.del(record)
  skew += 23_000
  expect(await ping()).toBe(200)
  await until(async () => (await redisClient.hGet(record, 'o')) === instances[0]!.scale.instanceId, 'the record written again')
  // Another instance took the session over while this one was not heard: this one drops its copy.
  await redisClient.hSet(record, 'o', instances[1]!.scale.instanceId)
  const before = instances[0]!.http.sessionCount
  skew += 23_000
  expect(await ping()).toBe(200)
  await until(async () => instances[0]!.http.sessionCount === before - 1, 'the copy dropped')
  // What is shared stays for the instance holding it now.
  expect(await redisClient.hGet(record, 'o')).toBe(instances[1]!.scale.instanceId)
})
