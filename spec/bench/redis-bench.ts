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
 * - (Redis commands per call are INFO commandstats': the commands the stores' Lua scripts run
 *   count one by one, so they are far more than the round trips, which are a few per call;)
 * - the in-process Redis mode again on a Redis Cluster of three primaries (started by the bench as
 *   the cluster specs do), from 16 client sessions at 4 in flight each (a session's events are in
 *   one shard of the event store, so one session would load one primary): calls/s, p50/p99, Redis
 *   commands per call (INFO commandstats summed over the primaries) and each primary's share;
 * - the three instance processes behind nginx again, through a rolling restart (each in turn: a
 *   fresh instance started, nginx reloaded with it in place of the old one, the old one drained by
 *   SIGTERM), the calls going on at 64 in flight: calls/s over the restart window, failed calls,
 *   Redis commands per call;
 * - what Redis holds per stored SSE event and per task (INFO memory, used_memory before and after
 *   storing many), for the capacity plan in README.
 */
import { createServer } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { connectRedis, redisEventStore, redisScaleOut, redisTaskStore, type RedisEventStore } from '../../transports/redis.ts'
import { redisCli, startRedis, startRedisCluster } from '../helpers/redis-server.ts'
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

/** The in-process Redis mode on a Redis Cluster of three primaries. */
export interface RedisOnClusterReport extends Latency {
  primaries: number
  perSecond: number
  commandsPerCall: number
  /** Each primary's share of those commands (each session's events are on its shard's primary). */
  sharePerPrimary: number[]
  /** Client sessions the calls came from, and the event store's shards they were spread over. */
  sessions: number
  shards: number
}

/** Three instance processes behind nginx while each is replaced in turn. */
export interface RollingRestartReport {
  instances: number
  /** From the first instance started to the last one drained and exited. */
  windowMs: number
  perSecond: number
  calls: number
  failedCalls: number
  /** The failed calls' errors (name: message) and how many failed with each. */
  failures: Record<string, number>
  commandsPerCall: number
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
  onCluster: RedisOnClusterReport
  rollingRestart: RollingRestartReport
}

/**
 * Calls echo with `inFlight` calls outstanding until `until` settles (a number: for that many ms);
 * each answered call's latency is pushed onto `latencies`. A failed call is counted, not thrown.
 */
async function rate(client: McpClient, inFlight: number, until: number | Promise<unknown>, latencies: number[] = []): Promise<{ perSecond: number; calls: number; failed: number; failures: Map<string, number> }> {
  let calls = 0
  let failed = 0
  // How many calls failed with each message, to tell what a failure was.
  const failures = new Map<string, number>()
  const start = performance.now()
  // Set when `until` settles (or its time is up): the callers finish the call they are in and stop.
  let isDone = false
  const done = typeof until === 'number' ? new Promise(resolve => setTimeout(resolve, until)) : until
  void done.finally(() => { isDone = true })
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (!isDone) {
      const started = performance.now()
      try {
        await client.callTool('echo', { text: 'hi' })
        latencies.push(performance.now() - started)
        calls++
      } catch (error) {
        failed++
        const message = describeFailure(error)
        failures.set(message, (failures.get(message) ?? 0) + 1)
      }
    }
  }))
  return { perSecond: calls / ((performance.now() - start) / 1000), calls, failed, failures }
}

/** An error and its causes, `name: message` each, with a socket error's code: what a failed call met. */
function describeFailure(error: unknown): string {
  const parts: string[] = []
  for (let at: unknown = error; at !== undefined && at !== null && parts.length < 4; at = (at as { cause?: unknown }).cause) {
    if (!(at instanceof Error)) { parts.push(String(at)); break }
    const code = (at as { code?: unknown }).code
    parts.push(`${at.name}: ${at.message.replace(/http:\/\/127\.0\.0\.1:\d+/g, 'http://127.0.0.1:<port>')}${typeof code === 'string' ? ` (${code})` : ''}`)
  }
  return parts.join(' <- ')
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

    const onCluster = await runOnCluster(seconds)
    console.log(`  64 in flight from ${onCluster.sessions} sessions, 1 instance on a Redis Cluster of ${onCluster.primaries} primaries (${onCluster.shards} event store shards)  ${onCluster.perSecond.toFixed(0).padStart(6)} calls/s  ${formatLatency(onCluster)}  ${onCluster.commandsPerCall.toFixed(1)} Redis commands per call (${onCluster.sharePerPrimary.map(share => `${(share * 100).toFixed(0)}%`).join('/')} on each primary)`)
    const rollingRestart = await runRollingRestart(server.url, info('commandstats'))
    console.log(`  64 in flight, ${rollingRestart.instances} instances behind nginx, rolling restart of all (${(rollingRestart.windowMs / 1000).toFixed(1)} s)  ${rollingRestart.perSecond.toFixed(0).padStart(6)} calls/s  ${rollingRestart.failedCalls} failed of ${rollingRestart.calls + rollingRestart.failedCalls}  ${rollingRestart.commandsPerCall.toFixed(1)} Redis commands per call`)
    for (const [message, count] of Object.entries(rollingRestart.failures)) console.log(`    ${count} failed: ${message.slice(0, 160)}`)

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
    return { memoryPerSecond, redisPerSecond, memoryLatency, redisLatency, overheadUs, commandsPerCall, bytesPerEvent, bytesPerTask, cluster, onCluster, rollingRestart }
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
    await rate(client, 64, WARM_PROCESSES_MS)
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

/** The warm-up of fresh instance processes, so the JIT has run on each. */
const WARM_PROCESSES_MS = 1000

/**
 * One instance in this process, its whole scale-out (`redisScaleOut({ cluster })`) on a Redis
 * Cluster of three primaries; one client session at 64 in flight for `seconds`. Commands per call
 * sum INFO commandstats over every node (each node's INFO counts itself once).
 */
async function runOnCluster(seconds: number): Promise<RedisOnClusterReport> {
  const cluster = await startRedisCluster()
  const commands = () => Promise.all(cluster.nodes.map(node => commandCount(() => redisCli(node.port, 'INFO', 'commandstats'))))
  try {
    const scale = await redisScaleOut({ cluster: cluster.urls }, { prefix: 'bench:' })
    const mcp = createServer({ name: 'bench-cluster', version: '1' }, { ...scale.server })
    mcp.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
    const http = streamableHttp({ ...scale.http })
    await mcp.listen(http)
    const clients = await Promise.all(Array.from({ length: CLUSTER_SESSIONS }, () => connect(streamableHttpClient(http.url!), { name: 'bench', version: '1' }, { era: 'legacy' })))
    // All sessions at once: 64 in flight in all, the rate summed.
    const together = async (ms: number, latencies?: number[]) => {
      const each = await Promise.all(clients.map(client => rate(client, 64 / CLUSTER_SESSIONS, ms, latencies)))
      return { calls: each.reduce((sum, one) => sum + one.calls, 0), perSecond: each.reduce((sum, one) => sum + one.perSecond, 0) }
    }
    try {
      await together(200)
      const latencies: number[] = []
      const before = await commands()
      const measured = await together(seconds * 1000, latencies)
      // Each node's INFO counts itself once.
      const perNode = (await commands()).map((after, index) => after - before[index]! - 1)
      const total = perNode.reduce((sum, each) => sum + each, 0)
      const shards = (scale.http.eventStore as RedisEventStore).shards
      return { primaries: cluster.nodes.length, perSecond: measured.perSecond, ...latencyOf(latencies), commandsPerCall: total / measured.calls, sharePerPrimary: perNode.map(each => each / total), sessions: CLUSTER_SESSIONS, shards }
    } finally {
      await Promise.all(clients.map(client => client.close()))
      await mcp.close()
      await scale.close()
    }
  } finally {
    await cluster.stop()
  }
}

/** Client sessions of the cluster row (64 in flight in all). */
const CLUSTER_SESSIONS = 16

/**
 * Three instance processes on `redisUrl` behind nginx, one client session at 64 in flight, and a
 * rolling restart of all three as `npm run cluster` does it (a fresh instance, nginx reloaded with
 * it in place of the old one, the old one drained by SIGTERM and exited): calls/s and failed calls
 * over the window from the first fresh instance's start to the last old one's exit.
 */
async function runRollingRestart(redisUrl: string, commandstats: () => Promise<string>): Promise<RollingRestartReport> {
  const spawn = () => spawnInstance({ redisUrl, prefix: 'restart:', stderr: 'ignore' })
  let instances = await Promise.all([0, 1, 2].map(spawn))
  // Every process started, the old ones stopped as they are replaced: what is left is stopped at the end.
  const started = [...instances]
  let nginx: TestNginx | undefined
  try {
    nginx = await startNginx({ upstreams: instances.map(instance => instance.address) })
    const client = await connect(streamableHttpClient(`${nginx.url}/mcp`), { name: 'bench', version: '1' }, { era: 'legacy' })
    await rate(client, 64, WARM_PROCESSES_MS)
    const before = await commandCount(commandstats)
    const windowStart = performance.now()
    const restart = (async () => {
      for (const old of [...instances]) {
        const fresh = await spawn()
        started.push(fresh)
        instances = [...instances.filter(instance => instance !== old), fresh]
        await nginx!.reload(instances.map(instance => instance.address))
        await old.stop()
      }
    })()
    const measured = await rate(client, 64, restart)
    await restart
    const windowMs = performance.now() - windowStart
    const commandsPerCall = (await commandCount(commandstats) - before - 1) / measured.calls
    await client.close()
    return { instances: instances.length, windowMs, perSecond: measured.perSecond, calls: measured.calls, failedCalls: measured.failed, failures: Object.fromEntries(measured.failures), commandsPerCall }
  } finally {
    await nginx?.stop()
    await Promise.all(started.map(instance => instance.stop()))
  }
}
