/**
 * The Redis part of `npm run bench` (`BENCH_ONLY=redis`), against a real redis-server started for
 * it (Debian's package) on a free loopback port:
 *
 * - tools/call over Streamable HTTP at 64 in flight, one instance with the in-memory event store
 *   against one with the Redis event store, task store and event bus, interleaved rounds; calls/s,
 *   p50/p99 latency, the per-call overhead of the Redis mode, and Redis commands per call (INFO
 *   commandstats);
 * - the same calls from one client session to three instances (examples/cluster/instance.ts, a
 *   process each, `redisScaleOut`) behind nginx round-robin, so most calls reach an instance that
 *   does not hold the session and are forwarded over Redis; calls/s, p50/p99, Redis commands per
 *   call, and how nginx spread the requests;
 * - what Redis holds per stored SSE event and per task (INFO memory, used_memory before and after
 *   storing many), for the capacity plan in README.
 */
import { createServer } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { connectRedis, redisEventStore, redisScaleOut, redisTaskStore } from '../../transports/redis.ts'
import { startRedis } from '../helpers/redis-server.ts'
import { startNginx, type TestNginx } from '../helpers/nginx.ts'
import { spawnInstance } from '../../examples/cluster/spawn-instance.ts'

/** Call latency percentiles, in ms. */
export interface Latency {
  p50Ms: number
  p99Ms: number
}

/** The cluster mode: three instance processes behind nginx, one client session. */
export interface RedisClusterReport extends Latency {
  instances: number
  perSecond: number
  commandsPerCall: number
  /** Requests nginx sent to each instance (the access log), in the order of its upstreams. */
  requestsPerInstance: number[]
}

/** What the Redis bench reports. */
export interface RedisBenchReport {
  memoryPerSecond: number
  redisPerSecond: number
  memoryLatency: Latency
  redisLatency: Latency
  overheadUs: number
  commandsPerCall: number
  bytesPerEvent: number
  bytesPerTask: number
  cluster: RedisClusterReport
}

/** Calls echo with `inFlight` calls outstanding for `ms`; each call's latency is pushed onto `latencies`. */
async function rate(client: McpClient, inFlight: number, ms: number, latencies: number[] = []): Promise<{ perSecond: number; calls: number }> {
  let calls = 0
  const end = performance.now() + ms
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < end) {
      const start = performance.now()
      await client.callTool('echo', { text: 'hi' })
      latencies.push(performance.now() - start)
      calls++
    }
  }))
  return { perSecond: calls / (ms / 1000), calls }
}

/** p50 and p99 of `latencies` (nearest rank). */
function latencyOf(latencies: number[]): Latency {
  const sorted = [...latencies].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN
  return { p50Ms: at(0.5), p99Ms: at(0.99) }
}

const formatLatency = ({ p50Ms, p99Ms }: Latency) => `p50 ${p50Ms.toFixed(2)} ms p99 ${p99Ms.toFixed(2)} ms`

/** The total of INFO commandstats' calls. */
async function commandCount(info: () => Promise<string>): Promise<number> {
  let total = 0
  for (const match of (await info()).matchAll(/calls=(\d+)/g)) total += Number(match[1])
  return total
}

async function usedMemory(info: () => Promise<string>): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await info())![1])
}

/** Runs the comparison; prints and returns it. */
export async function runRedisBench(seconds = 1): Promise<RedisBenchReport> {
  const server = await startRedis()
  const redis = await connectRedis(server.url)
  const raw = redis as unknown as { sendCommand(args: string[]): Promise<string> }
  const info = (section: string) => () => raw.sendCommand(['INFO', section])
  try {
    // The Redis mode is the whole scale-out of one instance: sessions, events, tasks, bus, key.
    const scale = await redisScaleOut(redis, { prefix: 'bench:' })
    const make = (mode: 'memory' | 'redis') => {
      const mcp = createServer({ name: `bench-${mode}`, version: '1' }, mode === 'redis' ? { ...scale.server } : {})
      mcp.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
      const http = streamableHttp(mode === 'redis' ? { ...scale.http } : {})
      return { mcp, http }
    }
    const sides = [make('memory'), make('redis')]
    const clients: McpClient[] = []
    for (const side of sides) {
      await side.mcp.listen(side.http)
      clients.push(await connect(streamableHttpClient(side.http.url!), { name: 'bench', version: '1' }, { era: 'legacy' }))
    }
    for (const client of clients) await rate(client, 64, 200)
    const totals = [0, 0]
    const latencies: [number[], number[]] = [[], []]
    let redisCalls = 0
    const before = await commandCount(info('commandstats'))
    const rounds = 3
    for (let round = 0; round < rounds; round++) {
      for (const [index, client] of clients.entries()) {
        const measured = await rate(client, 64, (seconds * 1000) / rounds, latencies[index])
        totals[index]! += measured.perSecond
        if (index === 1) redisCalls += measured.calls
      }
    }
    // The INFO calls themselves are two commands.
    const commandsPerCall = (await commandCount(info('commandstats')) - before - 1) / redisCalls
    const [memoryPerSecond, redisPerSecond] = totals.map(total => total / rounds) as [number, number]
    const overheadUs = 1e6 / redisPerSecond - 1e6 / memoryPerSecond
    const [memoryLatency, redisLatency] = latencies.map(latencyOf) as [Latency, Latency]
    console.log(`  64 in flight  memory ${memoryPerSecond.toFixed(0).padStart(6)} calls/s  redis ${redisPerSecond.toFixed(0).padStart(6)} calls/s  ${(memoryPerSecond / redisPerSecond).toFixed(2)}x time per call (+${overheadUs.toFixed(0)} µs)  ${commandsPerCall.toFixed(1)} Redis commands per call`)
    console.log(`  latency       memory ${formatLatency(memoryLatency)}  redis ${formatLatency(redisLatency)}`)
    for (const client of clients) await client.close()
    for (const side of sides) await side.mcp.close()

    const cluster = await runCluster(server.url, info('commandstats'), seconds)
    console.log(`  64 in flight, ${cluster.instances} instances behind nginx  ${cluster.perSecond.toFixed(0).padStart(6)} calls/s  ${formatLatency(cluster)}  ${cluster.commandsPerCall.toFixed(1)} Redis commands per call  requests per instance ${cluster.requestsPerInstance.join('/')}`)

    // What Redis holds per event and per task.
    const count = 2000
    const events = redisEventStore(redis, { prefix: 'size:' })
    const memoryBefore = await usedMemory(info('memory'))
    for (let i = 0; i < count; i++) {
      await events.storeEvent(`stream${i % 100}`, { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: i } }, { sessionId: `session${i % 100}` })
    }
    const bytesPerEvent = (await usedMemory(info('memory')) - memoryBefore) / count
    const tasks = redisTaskStore(redis, { prefix: 'size:', maxTasksPerOwner: count })
    const tasksBefore = await usedMemory(info('memory'))
    for (let i = 0; i < count; i++) await tasks.create({ owner: `owner${i % 10}`, ttlMs: 3_600_000 })
    const bytesPerTask = (await usedMemory(info('memory')) - tasksBefore) / count
    console.log(`  Redis memory: ${bytesPerEvent.toFixed(0)} bytes per stored SSE event (a progress notification, 100 streams), ${bytesPerTask.toFixed(0)} bytes per working task (no result yet)`)
    return { memoryPerSecond, redisPerSecond, memoryLatency, redisLatency, overheadUs, commandsPerCall, bytesPerEvent, bytesPerTask, cluster }
  } finally {
    await redis.close().catch(() => {})
    await server.stop()
  }
}

/**
 * Three instance processes on `redisUrl` behind nginx; one client session calls through nginx at 64
 * in flight for `seconds`. Redis commands per call count every instance's commands (INFO is global).
 */
async function runCluster(redisUrl: string, commandstats: () => Promise<string>, seconds: number): Promise<RedisClusterReport> {
  const instances = await Promise.all([0, 1, 2].map(() => spawnInstance({ redisUrl, prefix: 'cluster:', stderr: 'ignore' })))
  let nginx: TestNginx | undefined
  try {
    nginx = await startNginx({ upstreams: instances.map(instance => instance.address) })
    const client = await connect(streamableHttpClient(`${nginx.url}/mcp`), { name: 'bench', version: '1' }, { era: 'legacy' })
    // Fresh processes: a longer warm-up than the in-process modes get, so the JIT has run on all three.
    await rate(client, 64, 1000)
    const logged = (await nginx.accessLog()).length
    const latencies: number[] = []
    const before = await commandCount(commandstats)
    const measured = await rate(client, 64, seconds * 1000, latencies)
    // The INFO call that reads `before` is counted by the second one.
    const commandsPerCall = (await commandCount(commandstats) - before - 1) / measured.calls
    await client.close()
    const log = (await nginx.accessLog()).slice(logged)
    const requestsPerInstance = instances.map(instance => log.filter(entry => entry.upstream === instance.address).length)
    return { instances: instances.length, perSecond: measured.perSecond, ...latencyOf(latencies), commandsPerCall, requestsPerInstance }
  } finally {
    await nginx?.stop()
    await Promise.all(instances.map(instance => instance.stop()))
  }
}
