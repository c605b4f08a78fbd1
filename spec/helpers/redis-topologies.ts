/**
 * The tests' Redis Cluster and Sentinel deployments, from Debian's redis-server and redis-sentinel:
 * every process on loopback, on free ports, in one temporary directory, started once per test file
 * and stopped (SIGKILL, directory removed) by `stop`, or when this process exits. And what the
 * files on a deployment share: rxmcp instances on it behind a round-robin nginx, and the probes
 * of a failover (replication offsets, a session's upstreams, a session served again).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll } from 'vitest'
import { freeLoopbackPort } from '../../examples/cluster/spawn-nginx.ts'
import type { McpServer } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { redisScaleOut, type RedisScaleOut, type RedisTarget } from '../../transports/redis.ts'
import { startNginx, type NginxAccess, type TestNginx } from './nginx.ts'

const run = promisify(execFile)

/** One redis-server or redis-sentinel process of a deployment. */
export interface RedisProcess {
  readonly port: number
  readonly url: string
  /** SIGKILL, as a crash; resolves once it has exited. */
  kill(): Promise<void>
}

/** A Redis Cluster of three primaries (and their replicas, if asked), slots spread by `redis-cli --cluster create`. */
export interface TestRedisCluster {
  /** Every node; which are primaries is the cluster's business (`redis-cli --cluster create` picks). */
  readonly nodes: readonly RedisProcess[]
  /** The nodes' URLs, for `connectRedis({ cluster })`. */
  readonly urls: readonly string[]
  stop(): Promise<void>
}

/** A primary, one replica of it, and one Sentinel watching them (quorum 1). */
export interface TestRedisSentinel {
  readonly primary: RedisProcess
  readonly replica: RedisProcess
  readonly sentinel: RedisProcess
  /** The name the Sentinel knows the primary by. */
  readonly name: string
  /** The primary's address as the Sentinel says now (`SENTINEL get-master-addr-by-name`). */
  primaryAddress(): Promise<string | undefined>
  stop(): Promise<void>
}

/** Runs redis-cli against a port; its output. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })
  return stdout
}

/** Polls `check` every 50 ms until it holds, for at most `ms`; throws `what` past it. */
export async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  for (;;) {
    if (await check().catch(() => false)) return
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

/** The processes of one deployment and its directory: started, killed, removed together. */
class Deployment {
  readonly children: ChildProcess[] = []
  #exitHook = () => { for (const child of this.children) child.kill('SIGKILL'); rmSync(this.dir, { recursive: true, force: true }) }

  constructor(readonly dir: string) { process.once('exit', this.#exitHook) }

  /** Starts `command` with `args` on `port` and waits until it answers PING (bounded). */
  async start(command: string, port: number, args: string[]): Promise<RedisProcess> {
    const child = spawn(command, args, { stdio: 'ignore' })
    child.on('error', () => {})
    this.children.push(child)
    await until(`${command} on port ${port} (is Debian's ${command} package installed?)`, async () => (await redisCli(port, 'PING')).trim() === 'PONG', 10_000)
    return {
      port,
      url: `redis://127.0.0.1:${port}`,
      kill: async () => {
        if (child.exitCode !== null || child.signalCode !== null) return
        const exited = new Promise(resolve => child.once('exit', resolve))
        child.kill('SIGKILL')
        await exited
      },
    }
  }

  async stop(processes: readonly RedisProcess[]): Promise<void> {
    process.off('exit', this.#exitHook)
    await Promise.all(processes.map(each => each.kill()))
    await rm(this.dir, { recursive: true, force: true })
  }
}

/**
 * Starts three `redis-server --cluster-enabled yes` on free loopback ports (each with a cluster
 * bus port of its own, also free), or six with `replicas: 1`, joins them with `redis-cli --cluster
 * create ... --cluster-replicas <replicas> --cluster-yes`, and waits until every node says
 * `cluster_state:ok` (and every replica is in sync with its primary).
 */
export async function startRedisCluster(options: { replicas?: 0 | 1 } = {}): Promise<TestRedisCluster> {
  const replicas = options.replicas ?? 0
  const deployment = new Deployment(await mkdtemp(join(tmpdir(), 'rxmcp-redis-cluster-')))
  const nodes: RedisProcess[] = []
  try {
    for (let n = 0; n < 3 * (1 + replicas); n++) {
      const port = await freeLoopbackPort()
      const bus = await freeLoopbackPort()
      nodes.push(await deployment.start('redis-server', port, [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-port', String(bus),
        '--cluster-config-file', join(deployment.dir, `nodes-${port}.conf`), '--dir', deployment.dir, '--save', '', '--appendonly', 'no',
        '--cluster-node-timeout', '2000',
      ]))
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map(node => `127.0.0.1:${node.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 30_000 })
    for (const node of nodes) {
      await until(`cluster_state:ok on ${node.port}`, async () => (await redisCli(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'))
      await until(`${node.port} a primary or a replica in sync`, async () => {
        const replication = await redisCli(node.port, 'INFO', 'replication')
        return replication.includes('role:master') || replication.includes('master_link_status:up')
      })
    }
  } catch (error) {
    await deployment.stop(nodes)
    throw error
  }
  return { nodes, urls: nodes.map(node => node.url), stop: () => deployment.stop(nodes) }
}

/**
 * Starts a primary, a replica of it (`--replicaof`), and a redis-sentinel monitoring the primary
 * with quorum 1, `down-after-milliseconds` 500 and `failover-timeout` 2,000, and waits until the
 * replica is in sync and the Sentinel has found it.
 */
export async function startRedisSentinel(name = 'rxmcp'): Promise<TestRedisSentinel> {
  const deployment = new Deployment(await mkdtemp(join(tmpdir(), 'rxmcp-redis-sentinel-')))
  const started: RedisProcess[] = []
  try {
    const server = async (extra: string[]) => {
      const port = await freeLoopbackPort()
      const node = await deployment.start('redis-server', port, ['--port', String(port), '--bind', '127.0.0.1', '--dir', deployment.dir,
        '--dbfilename', `dump-${port}.rdb`, '--save', '', '--appendonly', 'no', ...extra])
      started.push(node)
      return node
    }
    const primary = await server([])
    const replica = await server(['--replicaof', '127.0.0.1', String(primary.port)])
    await until('the replica in sync', async () => (await redisCli(replica.port, 'INFO', 'replication')).includes('master_link_status:up'))
    const port = await freeLoopbackPort()
    const config = join(deployment.dir, 'sentinel.conf')
    // Sentinel rewrites its configuration file as it learns: it must be its own and writable.
    await writeFile(config, [
      `port ${port}`, 'bind 127.0.0.1', `dir ${deployment.dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primary.port} 1`,
      `sentinel down-after-milliseconds ${name} 500`,
      `sentinel failover-timeout ${name} 2000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'))
    const sentinel = await deployment.start('redis-sentinel', port, [config])
    started.push(sentinel)
    await until('the Sentinel knowing the replica', async () => /^num-slaves\n1$/m.test(await redisCli(port, 'SENTINEL', 'MASTER', name)))
    const primaryAddress = async () => {
      const [host, at] = (await redisCli(port, 'SENTINEL', 'get-master-addr-by-name', name)).trim().split('\n')
      return host === undefined || at === undefined ? undefined : `${host}:${at}`
    }
    return { primary, replica, sentinel, name, primaryAddress, stop: () => deployment.stop(started) }
  } catch (error) {
    await deployment.stop(started)
    throw error
  }
}

/** One rxmcp instance on a Redis deployment: its scale-out wiring, server and listener. */
export interface TopologyInstance { scale: RedisScaleOut; server: McpServer; http: StreamableHttpServer }

/** Options of {@link useInstancesBehindNginx}. */
export interface InstancesBehindNginxOptions<D extends { stop(): Promise<void> }> {
  /** Starts the Redis deployment (once for the file). */
  deploy(): Promise<D>
  /** Where the instances connect on it. */
  target(deployed: D): RedisTarget
  /** The Redis key prefix every instance shares. */
  prefix: string
  /** How many instances (each in this process, on its own listener). */
  count: number
  /** The server of instance `index`, built on its scale-out (`{ ...scale.server }`). */
  build(scale: RedisScaleOut, index: number): McpServer
  /** Bound on the whole start (default 60 s). */
  timeoutMs?: number
}

/** What {@link useInstancesBehindNginx} started, once its beforeAll has run. */
export interface InstancesBehindNginx<D> {
  readonly instances: readonly TopologyInstance[]
  deployed(): D
  nginx(): TestNginx
}

/**
 * Registers the file's hooks: beforeAll deploys Redis, starts `count` instances on it (Streamable
 * HTTP, `retryMs` 10) and a real nginx balancing round-robin over them without stickiness;
 * afterAll stops nginx, closes every instance, then stops the deployment.
 */
export function useInstancesBehindNginx<D extends { stop(): Promise<void> }>(options: InstancesBehindNginxOptions<D>): InstancesBehindNginx<D> {
  // Set by beforeAll; afterAll stops what of them was started.
  let deployed: D | undefined
  let nginx: TestNginx | undefined
  const instances: TopologyInstance[] = []
  beforeAll(async () => {
    deployed = await options.deploy()
    for (let index = 0; index < options.count; index++) {
      const scale = await redisScaleOut(options.target(deployed), { prefix: options.prefix })
      const server = options.build(scale, index)
      const http = streamableHttp({ ...scale.http, retryMs: 10 })
      instances.push({ scale, server, http })
      await server.listen(http)
    }
    nginx = await startNginx({ upstreams: instances.map(instance => new URL(instance.http.url!).host) })
  }, options.timeoutMs ?? 60_000)
  afterAll(async () => {
    await nginx?.stop()
    for (const instance of instances) {
      await instance.server.close().catch(() => {})
      await instance.http.close().catch(() => {})
      await instance.scale.close()
    }
    await deployed?.stop()
  })
  return { instances, deployed: () => deployed!, nginx: () => nginx! }
}

/** The instances that answered a session's POSTs with 200, from entry `from` of nginx's log on. */
export function upstreamsOf(log: readonly NginxAccess[], sessionId: string, from: number): Set<string> {
  return new Set(log.slice(from).filter(entry => entry.sessionId === sessionId && entry.method === 'POST' && entry.status === 200).map(entry => entry.upstream))
}

/** The replication offset a server reports: the primary's written, or the replica's applied (-1 when it says none). */
export async function replicationOffset(port: number, field: 'master_repl_offset' | 'slave_repl_offset'): Promise<number> {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(await redisCli(port, 'INFO', 'replication'))
  return match === null ? -1 : Number(match[1])
}

/**
 * A raw tools/call of `echo` with `text` in session `sessionId` at `url` (2025-11-25): its status and
 * body, status 0 when it failed or took over 3 s (a call forwarded while pub/sub moves to a new
 * primary may wait for nothing).
 */
export function echoInSession(url: string, sessionId: string): (id: string, text: string) => Promise<{ status: number; body: string }> {
  return (id, text) => fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } }),
    signal: AbortSignal.timeout(3000),
  }).then(async response => ({ status: response.status, body: await response.text() }), (error: unknown) => ({ status: 0, body: String(error) }))
}

/**
 * Waits (bounded: 60 s) until `echo` answers two calls in a row with their own text: round-robin
 * over two instances, so one through each.
 */
export async function untilServedAgain(echo: (id: string, text: string) => Promise<{ status: number; body: string }>): Promise<void> {
  // Calls answered in a row, and calls made: each call's text is its own.
  let inRow = 0
  let attempt = 0
  await until('the session served again', async () => {
    const answer = await echo(`after-${attempt}`, `after ${attempt}`)
    const isServed = answer.status === 200 && answer.body.includes(`after ${attempt++}`)
    inRow = isServed ? inRow + 1 : 0
    return inRow >= 2
  }, 60_000)
}

/** A legacy session opened through the balancer, and a raw `echo` call in it ({@link echoInSession}). */
export interface BalancedSession {
  readonly client: McpClient
  readonly transport: ReturnType<typeof streamableHttpClient>
  readonly sessionId: string
  readonly echo: ReturnType<typeof echoInSession>
}

/**
 * Opens a session (our client, 2025-11-25) through `nginx`, and waits until two raw `echo` calls in
 * it were answered and nginx logged both of two instances serving it (round-robin: one POST each).
 * The caller closes `client`.
 */
export async function sessionThroughBoth(nginx: TestNginx): Promise<BalancedSession> {
  const transport = streamableHttpClient(`${nginx.url}/mcp`)
  const client = await connect(transport, { name: 'c', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
  const sessionId = transport.sessionId!
  const echo = echoInSession(`${nginx.url}/mcp`, sessionId)
  const before = await Promise.all([echo('b1', 'before'), echo('b2', 'before')])
  if (before.some(answer => answer.status !== 200)) {
    await client.close()
    throw new Error(`the session's first calls were answered ${before.map(answer => answer.status).join(', ')}`)
  }
  await until('nginx logging both instances serving the session', async () => upstreamsOf(await nginx.accessLog(), sessionId, 0).size === 2)
  return { client, transport, sessionId, echo }
}
