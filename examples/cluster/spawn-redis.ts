import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import { freeLoopbackPort } from './spawn-nginx.ts'

/**
 * A redis-server (Debian's package) of its own: loopback, a free port, a temporary directory, no
 * persistence unless asked. The cluster example starts one; the tests start one per file.
 */
export interface SpawnedRedis {
  readonly url: string
  readonly port: number
  /** Stops it (SIGKILL: as a crash) and, with `restart`, starts it again on the same port. */
  kill(): Promise<void>
  restart(): Promise<void>
  /** Deletes what it persisted (call while it is killed): the next start is empty, as after losing its disk. */
  wipe(): Promise<void>
  stop(): Promise<void>
}

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /** Persist every write (AOF, fsync always), so a restart keeps the data (default: no persistence). */
  appendOnly?: boolean
}

/** Starts redis-server and waits until it answers PING (bounded: 10 s); killed when this process exits. */
export async function startRedis(options: StartRedisOptions = {}): Promise<SpawnedRedis> {
  const port = await freeLoopbackPort()
  const dir = await mkdtemp(join(tmpdir(), 'rxmcp-redis-'))
  const persistence = options.appendOnly === true ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']
  let child: ChildProcess | undefined
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence, '--protected-mode', 'yes'], { stdio: 'ignore' })
    child.on('error', () => {})
    const end = Date.now() + 10_000
    while (!(await pings(port))) {
      if (Date.now() > end) throw new Error(`redis-server did not answer on port ${port} (is the redis-server package installed?)`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
  await launch()
  const killOnExit = () => { child?.kill('SIGKILL'); rmSync(dir, { recursive: true, force: true }) }
  process.once('exit', killOnExit)
  const kill = async () => {
    const running = child
    // A killed child has a signalCode and no exitCode: it has exited all the same.
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise(resolve => running.once('exit', resolve))
    running.kill('SIGKILL')
    await exited
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: launch,
    wipe: async () => {
      await rm(dir, { recursive: true, force: true })
      await mkdir(dir, { recursive: true })
    },
    stop: async () => { process.off('exit', killOnExit); await kill(); await rm(dir, { recursive: true, force: true }) },
  }
}

/** True when something on `port` answers PING with PONG. */
function pings(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const socket = createConnection({ port, host: '127.0.0.1' })
    socket.setTimeout(500)
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', data => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
  })
}
