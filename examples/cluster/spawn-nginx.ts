/**
 * Runs a real nginx (Debian's `nginx` package) as a child process with {@link nginxConfig}:
 * everything it writes (config, pid, logs, temp files) in a fresh temporary directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ACCESS_LOG, nginxConfig } from './nginx-config.ts'

/** Options of {@link spawnNginx}. */
export interface SpawnNginxOptions {
  /** The instances, as `host:port`. */
  upstreams: readonly string[]
  /** The port to listen on (default: a free loopback port, retried if another process takes it first). */
  port?: number
  /** The interface to listen on (default 127.0.0.1). */
  host?: string
}

/** A running nginx. */
export interface SpawnedNginx {
  /** `http://<host>:<port>`. */
  readonly url: string
  readonly port: number
  /** Its temporary directory (nginx.conf, access.log, error.log). */
  readonly dir: string
  readonly pid: number
  /** The access log's path: one JSON object per request (see nginxConfig). */
  readonly accessLogPath: string
  /** Resolves when nginx exits (by `stop` or otherwise). */
  readonly exited: Promise<void>
  /**
   * Balances over other instances from now on (a rolling restart): writes the configuration and
   * reloads nginx (SIGHUP). Resolves once new connections get the new configuration (bounded: 10 s);
   * requests already under way finish with the old one (nginx's graceful reload).
   */
  reload(upstreams: readonly string[]): Promise<void>
  /** SIGTERM (nginx's fast shutdown), SIGKILL to its process group after 5 s, then removes the directory. */
  stop(): Promise<void>
}

/** Bound on waiting for nginx to accept connections. */
const START_TIMEOUT_MS = 10_000
/** Bound on waiting for nginx to exit after SIGTERM. */
const STOP_TIMEOUT_MS = 5_000

/** nginx's path: on PATH, else where Debian puts it (/usr/sbin is not on every user's PATH). */
export function nginxBinary(): string {
  if (spawnSync('sh', ['-c', 'command -v nginx'], { stdio: 'ignore' }).status === 0) return 'nginx'
  if (existsSync('/usr/sbin/nginx')) return '/usr/sbin/nginx'
  throw new Error('nginx is not installed (apt-get install nginx; npm test installs it)')
}

/**
 * Starts nginx in front of `upstreams` and resolves once it accepts connections (bounded: 10 s),
 * or rejects with its error log. nginx runs in its own process group, killed on this process's
 * exit if `stop` was not called, so no worker outlives the caller.
 * @example
 * const nginx = await spawnNginx({ upstreams: ['127.0.0.1:3001', '127.0.0.1:3002'] })
 * console.log(nginx.url)
 * await nginx.stop()
 */
export async function spawnNginx(options: SpawnNginxOptions): Promise<SpawnedNginx> {
  const binary = nginxBinary()
  const host = options.host ?? '127.0.0.1'
  const attempts = options.port === undefined ? 3 : 1
  let failure: unknown
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? await freeLoopbackPort()
    const dir = await mkdtemp(join(tmpdir(), 'rxmcp-nginx-'))
    try {
      return await launch(binary, { upstreams: options.upstreams, port, host, dir })
    } catch (error) {
      failure = error
      await rm(dir, { recursive: true, force: true })
    }
  }
  throw failure
}

async function launch(binary: string, config: { upstreams: readonly string[]; port: number; host: string; dir: string }): Promise<SpawnedNginx> {
  const { port, host, dir } = config
  await writeFile(join(dir, 'nginx.conf'), nginxConfig(config))
  // -e: the error log before the config is read (the compiled-in one is outside `dir`).
  const child = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off;'], { stdio: 'ignore', detached: true })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  child.on('error', () => {})
  const killOnExit = () => killGroup(child, 'SIGKILL')
  process.once('exit', killOnExit)
  // Set once by whichever ends it first: stop(), or a failed start.
  let isStopped = false
  const stop = async () => {
    if (isStopped) return
    isStopped = true
    process.off('exit', killOnExit)
    if (child.exitCode === null && child.signalCode === null) {
      killGroup(child, 'SIGTERM')
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    }
    // The workers may outlive a master that was killed.
    killGroup(child, 'SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + START_TIMEOUT_MS
  // nginx writes its pid file once its sockets are bound: before that, whatever answers on the port is not it.
  while (!(existsSync(join(dir, 'nginx.pid')) && await accepts(host, port))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '')
      await stop()
      throw new Error(`nginx did not start on ${host}:${port}: ${log.trim() || `exit ${child.exitCode ?? child.signalCode}`}`)
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  // Each reload's number: the one its workers answer on /__rxmcp/generation.
  let generation = 0
  const reload = async (upstreams: readonly string[]) => {
    const current = ++generation
    await writeFile(join(dir, 'nginx.conf'), nginxConfig({ ...config, upstreams, generation: current }))
    const oldWorkers = workersOf(child.pid!)
    child.kill('SIGHUP')
    const until = Date.now() + START_TIMEOUT_MS
    // The new workers answer; and the old ones stopped accepting, or a new connection could still
    // reach one of them (and an upstream taken out) for a moment after the new ones started.
    while (await generationAt(host, port) !== String(current) || oldWorkers.some(isStillAccepting)) {
      if (Date.now() > until) throw new Error(`nginx did not take its new configuration within ${START_TIMEOUT_MS} ms: ${await readFile(join(dir, 'error.log'), 'utf8').catch(() => '')}`)
      await new Promise(resolve => setTimeout(resolve, 25))
    }
  }
  return { url: `http://${host}:${port}`, port, dir, pid: child.pid!, accessLogPath: join(dir, ACCESS_LOG), exited, reload, stop }
}

/** What `GET /__rxmcp/generation` answers on a fresh connection (undefined when nothing does). */
async function generationAt(host: string, port: number): Promise<string | undefined> {
  try {
    const response = await fetch(`http://${host}:${port}/__rxmcp/generation`, { headers: { connection: 'close' } })
    return await response.text()
  } catch {
    return undefined
  }
}

/** The pids of nginx's worker processes (the master's children), from Linux's /proc; none elsewhere. */
function workersOf(masterPid: number): number[] {
  let entries: string[]
  try { entries = readdirSync('/proc') } catch { return [] }
  const workers: number[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    // stat: `pid (comm) state ppid ...`; comm may hold spaces, so the fields are read after its `)`.
    const stat = readOrUndefined(`/proc/${entry}/stat`)
    const ppid = stat === undefined ? undefined : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (ppid === masterPid) workers.push(Number(entry))
  }
  return workers
}

/**
 * Whether an old worker still takes connections: nginx retitles a worker `... is shutting down` as
 * it closes its listening sockets on a reload, and the worker exits once its last connection ends.
 */
function isStillAccepting(pid: number): boolean {
  const title = readOrUndefined(`/proc/${pid}/cmdline`)
  return title !== undefined && title.includes('worker process') && !title.includes('shutting down')
}

function readOrUndefined(path: string): string | undefined {
  try { return readFileSync(path, 'utf8') } catch { return undefined }
}

/** Signals nginx's whole process group (master and workers); nothing if it is gone. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal)
  } catch {
    // Already gone.
  }
}

/** True when something on `host:port` accepts a TCP connection. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise(resolve => {
    const socket = createConnection({ port, host })
    socket.setTimeout(500)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
  })
}

/** A port free on loopback now (the OS picks it). */
export async function freeLoopbackPort(): Promise<number> {
  const { createServer } = await import('node:net')
  const probe = createServer()
  await new Promise<void>(resolve => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>(resolve => probe.close(() => resolve()))
  return port
}
