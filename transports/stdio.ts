import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { CoalescingWriter } from './coalescing-writer.ts'
import { asyncScheduler, Observable, Subject, type SchedulerLike } from '../lib/rx.ts'
import type { Inbound, Transport } from '../lib/transport.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, TransportError } from '../lib/jsonrpc/errors.ts'
import { jsonLines } from '../lib/codec/json-lines.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'

/**
 * DEFAULTS of {@link StdioOptions} and {@link StdioClientOptions}. stdio carries whole files in one
 * message (a 10 MiB argument or result is ordinary), so its limit is higher than the network
 * transports' 4 MiB: a line is held in memory once, and only by the one local peer.
 */
export const STDIO_DEFAULTS = { maxMessageSize: 64 * 1024 * 1024, shutdownGraceMs: 2000, answersAfterEndMs: 10_000 } as const

/** Options of {@link stdio}. */
export interface StdioOptions {
  /** Where messages come from (default `process.stdin`). */
  input?: Readable
  /**
   * Where messages go (default `process.stdout`): nothing but protocol may be written there. While
   * it holds more than its `writableHighWaterMark` unwritten, `input` is paused (no new requests
   * are read), and it resumes on `drain`: a peer that does not read its answers cannot make this
   * process buffer them without bound.
   */
  output?: Writable
  /** Largest incoming message in bytes (default 64 MiB); a longer line is answered with -32600 and its id. */
  maxMessageSize?: number
  /**
   * Bounds on each incoming message's nesting and members (default `STRUCTURE_DEFAULTS`: 128
   * levels, 100,000 members); a line past them is answered with -32700 and its id, unparsed.
   */
  structureLimits?: StructureLimits
  /**
   * Milliseconds the server goes on answering the requests in flight once stdin has ended (a client
   * that closed its end, `printf … | server`), before the connection closes and stops the rest
   * (default 10,000; 0 stops them at once). A client shutting down closes stdin, waits for the
   * server to exit and only then sends SIGTERM, so a server with nothing in flight exits at once.
   */
  answersAfterEndMs?: number
}

/**
 * The server side of stdio: newline-delimited JSON on stdin and stdout.
 *
 * `inbound` starts reading on subscribe and completes when stdin ends. Sends made in one tick are
 * written together (one `write` call), and a full stdout makes `send` return a Promise that
 * resolves on `drain`. After `close`, `send` throws `TransportError`.
 *
 * @example
 * await createServer(info).listen(stdio())
 */
export function stdio(options: StdioOptions = {}): Transport {
  const input = options.input ?? process.stdin
  const output = options.output ?? process.stdout
  // True while `inbound` is subscribed: only then may a drain resume reading.
  let isReading = false
  // Backpressure: stop reading requests while the answers are not being taken.
  const writer = new CoalescingWriter(output, 'microtask', isFull => {
    if (!isReading) return
    if (isFull) input.pause()
    else input.resume()
  })
  // Completes `inbound` when close() is called before stdin ends.
  const closing = new Subject<void>()
  let isClosed = false
  const inbound = new Observable<Inbound>(subscriber => {
    const decoder = jsonLines.createDecoder(item => subscriber.next(item), { ...options.structureLimits, maxMessageSize: options.maxMessageSize ?? STDIO_DEFAULTS.maxMessageSize })
    const onData = (chunk: Uint8Array | string) => decoder.write(chunk)
    const onEnd = () => { decoder.end(); subscriber.complete() }
    const onError = (error: Error) => subscriber.error(new TransportError('stdin failed', { cause: error }))
    input.on('data', onData)
    input.on('end', onEnd)
    input.on('error', onError)
    const closeSubscription = closing.subscribe(() => subscriber.complete())
    isReading = true
    return () => {
      isReading = false
      closeSubscription.unsubscribe()
      input.off('data', onData)
      input.off('end', onEnd)
      input.off('error', onError)
      // Let the process exit once nobody reads stdin any more.
      if (input === process.stdin) input.pause()
    }
  })
  return {
    kind: 'stdio',
    inbound,
    answersAfterEndMs: options.answersAfterEndMs ?? STDIO_DEFAULTS.answersAfterEndMs,
    send: payload => {
      if (isClosed) throw new TransportError('The stdio transport is closed')
      return writer.write(jsonLines.encode(payload) as string)
    },
    close: async () => {
      if (isClosed) return
      isClosed = true
      await writer.flush()
      closing.next()
      closing.complete()
    },
  }
}

/** Options of {@link stdioClient}. */
export interface StdioClientOptions {
  command: string
  args?: readonly string[]
  /**
   * Environment of the child. By default it gets only a safe subset of this process's environment
   * (PATH, HOME, USER, SHELL, TERM, LANG, TMPDIR, SystemRoot, …) plus `env`; with `inheritEnv: true`
   * it gets all of `process.env` plus `env`.
   */
  env?: Record<string, string>
  inheritEnv?: boolean
  cwd?: string
  /** The child's stderr: piped to the `stderr` Observable, inherited (default), or ignored. */
  stderr?: 'pipe' | 'inherit' | 'ignore'
  /**
   * Largest incoming message in bytes (default 64 MiB). A longer answer fails its request at once
   * with `FrameTooLargeError` (naming the size and the limit) instead of leaving it to time out.
   */
  maxMessageSize?: number
  /**
   * Bounds on each incoming message's nesting and members (default `STRUCTURE_DEFAULTS`: 128
   * levels, 100,000 members); an answer past them fails its request at once (-32700).
   */
  structureLimits?: StructureLimits
  /** Milliseconds to wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL (default 2000). */
  shutdownGraceMs?: number
  /**
   * POSIX: start the child in a process group of its own and send the shutdown signals to the whole
   * group, so grandchildren (`npx` -> `sh` -> `node`) go with it; whatever is left of the group when
   * the child exits is killed (default false).
   */
  processGroup?: boolean
  /**
   * Where the shutdown grace periods are timed (default RxJS's `asyncScheduler`, real time): a
   * test passes a virtual one and moves past them itself.
   */
  scheduler?: SchedulerLike
}

/** The client side of stdio: a child process and its pipes. */
export interface StdioClientTransport extends Transport {
  /** The child's stderr text, chunk by chunk, when `stderr: 'pipe'`; completes when it closes. */
  readonly stderr: Observable<string>
  /** The child's process id, once spawned. */
  readonly pid: number | undefined
  /** Resolves when the child has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Environment variables passed to a child by default. */
const SAFE_ENV_KEYS = process.platform === 'win32'
  ? ['APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PROCESSOR_ARCHITECTURE', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE', 'PROGRAMFILES']
  : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'TMPDIR', 'NODE_OPTIONS']

/**
 * Spawns a server as a child process and talks to it over its stdin and stdout.
 *
 * The child is spawned when `inbound` is subscribed (the connection does so at once). When the
 * child exits or its stdout ends, `inbound` errors with `ConnectionClosedError` (naming the exit
 * code or signal), so every pending request fails at once; after our own `close()` it completes
 * instead. A command that cannot be spawned errors `inbound` with `TransportError`.
 *
 * `close()` ends stdin, waits `shutdownGraceMs` for the child to exit, then sends SIGTERM, waits
 * again, then SIGKILL; it resolves once the child is gone.
 *
 * @example
 * const client = await connect(stdioClient({ command: 'npx', args: ['tsx', 'server.ts'] }), { name: 'me', version: '1' })
 */
export function stdioClient(options: StdioClientOptions): StdioClientTransport {
  return new ChildTransport(options)
}

class ChildTransport implements StdioClientTransport {
  readonly kind = 'stdio'
  readonly inbound: Observable<Inbound>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly #options: StdioClientOptions
  readonly #stderr = new Subject<string>()
  #child: ChildProcess | undefined
  #writer: CoalescingWriter | undefined
  #isClosing = false
  #resolveExit!: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void

  constructor(options: StdioClientOptions) {
    this.#options = options
    this.exited = new Promise(resolve => { this.#resolveExit = resolve })
    this.inbound = new Observable<Inbound>(subscriber => {
      if (this.#child !== undefined) { subscriber.error(new TransportError('A stdio client transport can be read once')); return }
      const env = options.inheritEnv ? { ...process.env, ...options.env } : { ...safeEnv(), ...options.env }
      let child: ChildProcess
      try {
        child = spawn(options.command, options.args ?? [], {
          cwd: options.cwd, env, stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'], windowsHide: true,
          detached: this.#isGroup,
        })
      } catch (error) {
        subscriber.error(new TransportError(`Could not start ${options.command}`, { cause: error }))
        this.#resolveExit({ code: null, signal: null })
        return
      }
      this.#child = child
      this.#writer = new CoalescingWriter(child.stdin!, 'turn')
      const decoder = jsonLines.createDecoder(item => subscriber.next(item), { ...options.structureLimits, maxMessageSize: options.maxMessageSize ?? STDIO_DEFAULTS.maxMessageSize })
      // A child that dies takes its pipes with it; write errors (EPIPE) surface as the exit.
      child.stdin!.on('error', () => {})
      child.stdout!.on('data', (chunk: Uint8Array) => decoder.write(chunk))
      child.stderr?.setEncoding('utf8')
      child.stderr?.on('data', (text: string) => this.#stderr.next(text))
      child.stderr?.on('end', () => this.#stderr.complete())
      if (child.stderr === null) this.#stderr.complete()
      let isSpawned = false
      child.on('spawn', () => { isSpawned = true })
      child.on('error', error => {
        if (!isSpawned) {
          subscriber.error(new TransportError(`Could not start ${options.command}: ${error.message}`, { cause: error }))
          this.#resolveExit({ code: null, signal: null })
        }
      })
      // A grandchild that outlives the child would hold our pipes open (no 'close') and leak.
      if (this.#isGroup) child.on('exit', () => this.#signal('SIGKILL'))
      child.on('close', (code, signal) => {
        decoder.end()
        this.#resolveExit({ code, signal })
        if (this.#isClosing) subscriber.complete()
        else subscriber.error(new ConnectionClosedError(`The server process exited (${signal !== null ? `signal ${signal}` : `code ${code}`})`))
      })
      return () => {
        if (!this.#isClosing) void this.close()
      }
    })
  }

  get stderr(): Observable<string> { return this.#stderr.asObservable() }
  get pid(): number | undefined { return this.#child?.pid }

  send(payload: JsonRpcPayload): void | Promise<void> {
    if (this.#writer === undefined || this.#isClosing || this.#child?.exitCode !== null) {
      throw new TransportError(this.#isClosing ? 'The stdio client transport is closed' : 'The server process is not running')
    }
    return this.#writer.write(jsonLines.encode(payload) as string)
  }

  async close(): Promise<void> {
    if (this.#isClosing) { await this.exited; return }
    this.#isClosing = true
    const child = this.#child
    if (child === undefined) return
    if (child.exitCode !== null || child.signalCode !== null) { await this.exited; return }
    const grace = this.#options.shutdownGraceMs ?? STDIO_DEFAULTS.shutdownGraceMs
    await this.#writer?.flush().catch(() => {})
    child.stdin?.end()
    const scheduler = this.#options.scheduler ?? asyncScheduler
    if (await exitsWithin(this.exited, grace, scheduler)) return
    this.#signal('SIGTERM')
    if (await exitsWithin(this.exited, grace, scheduler)) return
    this.#signal('SIGKILL')
    await this.exited
  }

  /** Whether the child leads a process group of its own ({@link StdioClientOptions.processGroup}). */
  get #isGroup(): boolean {
    return this.#options.processGroup === true && process.platform !== 'win32'
  }

  /** Signals the child, or its whole process group; a group already gone is no error. */
  #signal(signal: NodeJS.Signals): void {
    const pid = this.#child?.pid
    if (pid === undefined) return
    try {
      if (this.#isGroup) process.kill(-pid, signal)
      else this.#child!.kill(signal)
    } catch { /* already gone */ }
  }
}

function safeEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const key of SAFE_ENV_KEYS) {
    const value = process.env[key]
    // Shell functions exported by bash look like "() {...}"; they are a known injection vector.
    if (value !== undefined && !value.startsWith('()')) env[key] = value
  }
  return env
}

/** Whether `exited` settles within `ms` on the scheduler's clock. */
function exitsWithin(exited: Promise<unknown>, ms: number, scheduler: SchedulerLike): Promise<boolean> {
  return new Promise(resolve => {
    const timer = scheduler.schedule(() => resolve(false), ms)
    void exited.then(() => { timer.unsubscribe(); resolve(true) })
  })
}
