/**
 * Starts `instance.ts` as a child process: one rxmcp instance of the cluster, on its own port,
 * connected to the given Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { ownChild } from '../owned-child.ts'

/** Options of {@link spawnInstance}. */
export interface SpawnInstanceOptions {
  redisUrl: string
  /** Its port (default 0: any free one; read `address` once started). */
  port?: number
  /** The Redis key prefix of the cluster (default: redisScaleOut's). */
  prefix?: string
  /** Another instance script (a path), printing the same ready line (default: instance.ts beside this file). */
  script?: string
  /** Where its stderr goes (default: this process's stderr). */
  stderr?: 'inherit' | 'ignore'
  /** More environment variables for the script (beside PORT, REDIS_URL, REDIS_PREFIX). */
  env?: Record<string, string>
}

/** A running instance. */
export interface SpawnedInstance {
  /** Its MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  /** `127.0.0.1:<port>`, as an nginx upstream. */
  readonly address: string
  readonly pid: number
  /** Resolves with its exit code (or signal) when it exits. */
  readonly exited: Promise<number | string>
  /** SIGTERM (it drains: its requests finish, its sessions go to the others), SIGKILL after 15 s; resolves once it has exited. */
  stop(): Promise<void>
  /** SIGKILL at once (a crash); resolves once it has exited. */
  kill(): Promise<void>
}

const INSTANCE = fileURLToPath(new URL('./instance.ts', import.meta.url))
/** tsx's loader, resolved from here so the child finds it whatever its working directory. */
const TSX = import.meta.resolve('tsx')
/** Bound on waiting for the ready line (a cold tsx compile included). */
const START_TIMEOUT_MS = 20_000
/** Bound on waiting for a clean exit after SIGTERM: past the instance's drain (10 s by default). */
const STOP_TIMEOUT_MS = 15_000

/**
 * Spawns an instance with tsx and resolves once it prints its ready line (bounded: 20 s), or
 * rejects if it exits first. It is killed when this process exits, if not stopped before.
 * @example
 * const instance = await spawnInstance({ redisUrl: 'redis://127.0.0.1:6379' })
 * console.log(instance.url)
 * await instance.stop()
 */
export async function spawnInstance(options: SpawnInstanceOptions): Promise<SpawnedInstance> {
  const env = { ...process.env, ...options.env, PORT: String(options.port ?? 0), REDIS_URL: options.redisUrl, ...(options.prefix === undefined ? {} : { REDIS_PREFIX: options.prefix }) }
  const child = spawn(process.execPath, ['--import', TSX, options.script ?? INSTANCE], { env, stdio: ['ignore', 'pipe', options.stderr ?? 'inherit'] })
  const { exited, stop, kill } = ownChild(child, STOP_TIMEOUT_MS)
  try {
    const url = await readyUrl(child, exited)
    return { url, address: new URL(url).host, pid: child.pid!, exited, stop, kill }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The URL of the instance's `listening <url> instance <pid>` line. */
function readyUrl(child: ChildProcess, exited: Promise<number | string>): Promise<string> {
  const lines = createInterface({ input: child.stdout! })
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance ${child.pid} printed no ready line within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)
    lines.on('line', line => {
      const match = /^listening (\S+) instance \d+$/.exec(line)
      if (match !== null) { clearTimeout(timer); resolve(match[1]!) }
    })
    void exited.then(code => { clearTimeout(timer); reject(new Error(`instance ${child.pid} exited (${code}) before it was ready`)) })
  })
}
