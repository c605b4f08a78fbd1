/**
 * A credential checked when a connection opened does not stay valid: every listener ends what its
 * token opened when that token expires (`principal.expiresAt`), on the listener's clock. A
 * WebSocket closes with 1008; an HTTP response stream (a standalone GET stream, a resumed one, a
 * POST's SSE answer, a legacy `/sse` stream, a modern-era `subscriptions/listen` stream) ends, and
 * the client comes back with a fresh token, authenticated again like any request.
 */
import { Subscription, type SchedulerLike } from '../lib/rx.ts'
import type { Principal } from '../lib/auth.ts'
import type { BodyLimits, BodyResult, Exchange, Sink } from './http-exchange.ts'
import type { HeaderList } from './request-info.ts'

/** Longest wait one timer can take (Node fires a longer one at once); a later deadline is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Runs `work` at `dueMs` on the scheduler's clock (at once if past), in steps no timer overflows. */
export function at(scheduler: SchedulerLike, dueMs: number, work: () => void): Subscription {
  const subscription = new Subscription()
  const arm = (): void => {
    const wait = dueMs - scheduler.now()
    if (wait <= 0) work()
    else subscription.add(scheduler.schedule(arm, Math.min(wait, MAX_TIMER_MS)))
  }
  subscription.add(scheduler.schedule(arm, 0))
  return subscription
}

/** When a principal's token expires, in ms since the epoch; undefined when it does not say. */
export function expiryOf(principal: Principal | undefined): number | undefined {
  const seconds = principal?.expiresAt
  return seconds === undefined || !Number.isFinite(seconds) ? undefined : seconds * 1000
}

/**
 * The exchange, made to end any stream it answers with when its principal's token expires (the
 * exchange itself when the principal has no expiry). At that moment the exchange counts as closed
 * (its close listeners run first, as if the client went away: a session keeps the stream's events
 * for resumption, a legacy session ends, a modern request is cancelled), then the stream ends.
 */
export function endStreamsAtExpiry(exchange: Exchange, scheduler: SchedulerLike): Exchange {
  const expiresAt = expiryOf(exchange.principal)
  return expiresAt === undefined ? exchange : new ExpiringExchange(exchange, expiresAt, scheduler)
}

/** An exchange whose streams end at `expiresAtMs` (see {@link endStreamsAtExpiry}). */
class ExpiringExchange implements Exchange {
  readonly #inner: Exchange
  readonly #expiresAtMs: number
  readonly #scheduler: SchedulerLike
  readonly #listeners: (() => void)[] = []
  #isClosed = false
  /** The expiry, armed by the first stream; cancelled when the exchange closes first. */
  #timer: Subscription | undefined

  constructor(inner: Exchange, expiresAtMs: number, scheduler: SchedulerLike) {
    this.#inner = inner
    this.#expiresAtMs = expiresAtMs
    this.#scheduler = scheduler
    inner.onClose(() => this.#close())
  }

  get method(): string { return this.#inner.method }
  get pathname(): string { return this.#inner.pathname }
  get search(): string { return this.#inner.search }
  get remoteAddress(): string | undefined { return this.#inner.remoteAddress }
  get isForwarded(): boolean | undefined { return this.#inner.isForwarded }
  get principal(): Principal | undefined { return this.#inner.principal }
  set principal(principal: Principal | undefined) { this.#inner.principal = principal }
  header(name: string): string | null { return this.#inner.header(name) }
  headerList(): HeaderList { return this.#inner.headerList() }
  body(limits: BodyLimits): Promise<BodyResult> { return this.#inner.body(limits) }
  onClose(listener: () => void): void {
    if (this.#isClosed) queueMicrotask(listener)
    else this.#listeners.push(listener)
  }
  reply(status: number, headers: Record<string, string>, body?: string): void { this.#inner.reply(status, headers, body) }
  refuse(status: number, headers: Record<string, string>, body?: string): void { this.#inner.refuse(status, headers, body) }

  stream(status: number, headers: Record<string, string>, highWaterMark: number): Sink {
    const sink = this.#inner.stream(status, headers, highWaterMark)
    if (!this.#isClosed) {
      // Whoever writes to the stream lets go of it first (their close listeners), so nothing more
      // is written to a stream that is ending: events go to the store, for the client's resume.
      this.#timer ??= at(this.#scheduler, this.#expiresAtMs, () => { this.#close(); sink.end() })
    }
    return sink
  }

  #close(): void {
    if (this.#isClosed) return
    this.#isClosed = true
    this.#timer?.unsubscribe()
    for (const listener of this.#listeners.splice(0)) listener()
  }
}
