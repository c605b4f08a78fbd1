/**
 * The tests' Redis Cluster and Sentinel deployments, from Debian's redis-server and redis-sentinel:
 * every process on loopback, on free ports, in one temporary directory, started once per test file
 * and stopped (SIGKILL, directory removed) by `stop`, or when this process exits.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freeLoopbackPort } from '../../examples/cluster/spawn-nginx.ts'

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
