/**
 * One configured server under the host's supervision: its client is started, watched, restarted
 * with backoff when it crashes or disconnects, and given up on (failed, with its last stderr lines)
 * when it keeps crashing. Its state is an Observable; the host aggregates what each ready client offers.
 */
import { BehaviorSubject, timer, type Observable, type SchedulerLike, type Subscription } from '../lib/rx.ts'
import { backoffDelay, backoffPolicy } from '../lib/operators/backoff.ts'
import type { Implementation } from '../lib/schema/types.ts'
import type { HostServerConfig } from '../lib/host-config.ts'
import type { McpClient } from '../actors/client.ts'

/** A supervised server's state. */
export type ServerState =
  | { readonly status: 'starting'; readonly attempt: number }
  | { readonly status: 'ready'; readonly serverInfo: Implementation }
  | { readonly status: 'restarting'; readonly attempt: number; readonly reason: string; readonly delayMs: number }
  | { readonly status: 'failed'; readonly reason: string; readonly stderr: readonly string[] }
  | { readonly status: 'stopped' }

/** A started client. */
export interface StartedClient {
  readonly client: McpClient
  /** The child's process id (stdio servers). */
  readonly pid?: number
}

/** How restarts go (see HostOptions.restart). */
export interface RestartPolicy {
  /** Ms before the first restart; doubled each time (default 500). */
  initialDelayMs?: number
  /** Longest wait between restarts (default 30 s). */
  maxDelayMs?: number
  /** Crashes in a row after which the server is marked failed (default 5). A run ready for `stableMs` resets the count. */
  maxRestarts?: number
  /** Ms a server must stay ready for its crash count to start again from zero (default 60 s). */
  stableMs?: number
  /** Ms a start (spawn or connect, then the handshake) may take before it counts as a crash (default 30 s). */
  startTimeoutMs?: number
}

/** DEFAULTS of the restart policy: first delay 500 ms doubling to 30 s, 5 restarts, stable after 60 s, 30 s to start. */
export const RESTART_DEFAULTS = { initialDelayMs: 500, maxDelayMs: 30_000, maxRestarts: 5, stableMs: 60_000, startTimeoutMs: 30_000 } as const

/** stderr lines kept per server for a failed state. */
const STDERR_LINES = 20

/**
 * One configured server under supervision: starts its client (spawn or connect, then the
 * handshake), watches it, and restarts it with backoff by the restart policy when it crashes,
 * giving up after too many crashes in a row; its states are an Observable.
 */
export class SupervisedServer {
  readonly #states: BehaviorSubject<ServerState>
  readonly states: Observable<ServerState>
  #client: McpClient | undefined
  #pid: number | undefined
  #crashes = 0
  #readySince = 0
  #isStopped = false
  #retry: Subscription | undefined
  readonly #lines: string[] = []
  #partial = ''

  constructor(
    readonly config: HostServerConfig,
    /** Starts the client; the child's stderr (stdio servers) goes to `stderr` as it comes, from the spawn on. */
    readonly start: (config: HostServerConfig, stderr: (chunk: string) => void) => Promise<StartedClient>,
    readonly policy: RestartPolicy,
    readonly scheduler: SchedulerLike,
    /** Told each time a client connects (the state turns ready once this settles: its offer is listed), and when it goes (undefined). */
    readonly onClient: (client: McpClient | undefined) => void | Promise<void>,
  ) {
    this.#states = new BehaviorSubject<ServerState>({ status: 'starting', attempt: 1 })
    this.states = this.#states.asObservable()
  }

  get state(): ServerState { return this.#states.value }
  get client(): McpClient | undefined { return this.#client }
  /** The running child's process id (stdio servers). */
  get pid(): number | undefined { return this.#pid }
  /** The child's last stderr lines (stdio servers). */
  get stderr(): readonly string[] { return this.#lines }

  /** Starts the first attempt. */
  run(): void { void this.#attempt(1) }

  async #attempt(attempt: number): Promise<void> {
    if (this.#isStopped) return
    this.#states.next({ status: 'starting', attempt })
    let started: StartedClient
    try {
      started = await withTimeout(this.start(this.config, chunk => this.#collect(chunk)), this.policy.startTimeoutMs ?? RESTART_DEFAULTS.startTimeoutMs)
    } catch (error) {
      return this.#crashed(`could not start: ${messageOf(error)}`)
    }
    if (this.#isStopped) { await started.client.close().catch(() => {}); return }
    const client = started.client
    this.#client = client
    this.#pid = started.pid
    void client.closed.then(() => {
      if (this.#client !== client) return
      this.#client = undefined
      void this.onClient(undefined)
      if (!this.#isStopped) this.#crashed('the connection closed')
    })
    try { await this.onClient(client) } catch { /* what could be listed is listed */ }
    if (this.#client !== client) return
    this.#readySince = this.scheduler.now()
    this.#states.next({ status: 'ready', serverInfo: client.serverInfo })
  }

  #crashed(reason: string): void {
    if (this.#isStopped) return
    const stableMs = this.policy.stableMs ?? RESTART_DEFAULTS.stableMs
    // A run that stayed up long enough was not part of a crash loop.
    if (this.#readySince > 0 && this.scheduler.now() - this.#readySince >= stableMs) this.#crashes = 0
    this.#readySince = 0
    this.#crashes++
    if (this.#crashes > (this.policy.maxRestarts ?? RESTART_DEFAULTS.maxRestarts)) {
      this.#states.next({ status: 'failed', reason: `${reason} (${this.#crashes} times in a row)`, stderr: [...this.#lines] })
      return
    }
    const delayMs = backoffDelay(this.#crashes - 1, backoffPolicy(this.policy, RESTART_DEFAULTS))
    const attempt = this.#crashes + 1
    this.#states.next({ status: 'restarting', attempt, reason, delayMs })
    this.#retry = timer(delayMs, this.scheduler).subscribe(() => void this.#attempt(attempt))
  }

  /** Keeps the last STDERR_LINES lines of the child's stderr, across restarts. */
  #collect(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n')
    this.#partial = lines.pop() ?? ''
    this.#lines.push(...lines.filter(line => line.trim() !== ''))
    if (this.#lines.length > STDERR_LINES) this.#lines.splice(0, this.#lines.length - STDERR_LINES)
  }

  /** Stops supervising and closes the client (its child ends). */
  async stop(): Promise<void> {
    if (this.#isStopped) return
    this.#isStopped = true
    this.#retry?.unsubscribe()
    const client = this.#client
    this.#client = undefined
    if (client !== undefined) void this.onClient(undefined)
    await client?.close().catch(() => {})
    this.#states.next({ status: 'stopped' })
    this.#states.complete()
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms) })
  // A start that finishes after its timeout still gets closed.
  promise.then(started => { if (timer === undefined) void (started as { client?: McpClient }).client?.close() }, () => {})
  return Promise.race([promise, timeout]).finally(() => { clearTimeout(timer); timer = undefined })
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
