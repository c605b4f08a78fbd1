import { Observable, asyncScheduler, type MonoTypeOperatorFunction, type SchedulerLike, type Subscriber, type Subscription } from '../rx.ts'
import { TimeoutError } from '../jsonrpc/errors.ts'

/** Configuration of {@link withTimeout}. */
export interface WithTimeoutConfig<T> {
  /** Milliseconds the source may stay silent; restarted by every value that `resetOn` accepts. */
  each: number
  /** Hard maximum in milliseconds from subscription, whatever the source emits. */
  max?: number
  /** Which values restart the `each` timer (default: every value). */
  resetOn?: (value: T) => boolean
  /** Where time comes from (default `asyncScheduler`); marble tests pass a TestScheduler. */
  scheduler?: SchedulerLike
  /** Builds the error to fail with; receives which limit ran out. */
  error?: (limit: 'each' | 'max', ms: number) => Error
}

/**
 * Fails with a {@link TimeoutError} when the source is silent for `each` ms (values accepted by
 * `resetOn` restart the clock, as MCP progress notifications do) or runs past `max` ms in all.
 *
 * Emits what the source emits and completes when it completes. On expiry it unsubscribes from the
 * source first (so a request source sends its cancellation) and then errors. Unsubscribing stops
 * both timers. `each <= 0` or non-finite disables that timer.
 *
 * @example
 * client.request('tools/call', params).pipe(withTimeout({ each: 5_000, max: 60_000, resetOn: e => e.type === 'progress' }))
 * @see cancelOnUnsubscribe
 */
export function withTimeout<T>(config: WithTimeoutConfig<T>): MonoTypeOperatorFunction<T> {
  const settings: TimeoutSettings<T> = {
    each: Number.isFinite(config.each) && config.each > 0 ? config.each : 0,
    max: config.max !== undefined && Number.isFinite(config.max) && config.max > 0 ? config.max : 0,
    resetOn: config.resetOn,
    scheduler: config.scheduler ?? asyncScheduler,
    fail: config.error ?? defaultError,
  }
  return source => new Observable<T>(subscriber => new TimeoutWatch(source, subscriber, settings).teardown)
}

interface TimeoutSettings<T> {
  each: number
  max: number
  resetOn: ((value: T) => boolean) | undefined
  scheduler: SchedulerLike
  fail: (limit: 'each' | 'max', ms: number) => Error
}

/**
 * One subscription of {@link withTimeout}. A class with static scheduler work rather than closures:
 * this runs once per request, and per-request closures cost more than fields.
 */
class TimeoutWatch<T> {
  /** The running `each` timer; replaced when a value restarts the clock. */
  eachTimer: Subscription | undefined = undefined
  /** The `max` timer, started once. */
  maxTimer: Subscription | undefined = undefined
  readonly inner: Subscription
  readonly teardown: () => void

  constructor(source: Observable<T>, readonly subscriber: Subscriber<T>, readonly settings: TimeoutSettings<T>) {
    if (settings.each > 0) this.eachTimer = settings.scheduler.schedule(expireEach, settings.each, this)
    if (settings.max > 0) this.maxTimer = settings.scheduler.schedule(expireMax, settings.max, this)
    this.inner = source.subscribe(this)
    this.teardown = this.unsubscribe.bind(this)
  }

  next(value: T): void {
    const { each, resetOn, scheduler } = this.settings
    if (each > 0 && (resetOn === undefined || resetOn(value))) {
      this.eachTimer?.unsubscribe()
      this.eachTimer = scheduler.schedule(expireEach, each, this)
    }
    this.subscriber.next(value)
  }

  error(error: unknown): void { this.subscriber.error(error) }
  complete(): void { this.subscriber.complete() }

  expire(limit: 'each' | 'max'): void {
    this.inner.unsubscribe()
    this.subscriber.error(this.settings.fail(limit, limit === 'each' ? this.settings.each : this.settings.max))
  }

  unsubscribe(): void {
    this.eachTimer?.unsubscribe()
    this.maxTimer?.unsubscribe()
    this.inner?.unsubscribe()
  }
}

function expireEach<T>(watch?: TimeoutWatch<T>): void { watch!.expire('each') }
function expireMax<T>(watch?: TimeoutWatch<T>): void { watch!.expire('max') }

function defaultError(limit: 'each' | 'max', ms: number): Error {
  return new TimeoutError(limit === 'max' ? `Request exceeded its maximum total time of ${ms} ms` : `Request timed out after ${ms} ms`, ms)
}
