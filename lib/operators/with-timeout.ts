import { Observable, asyncScheduler, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs'
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
  const { each, max, resetOn, scheduler = asyncScheduler } = config
  const hasEach = Number.isFinite(each) && each > 0
  const hasMax = max !== undefined && Number.isFinite(max) && max > 0
  const fail = config.error ?? ((limit, ms) => new TimeoutError(limit === 'max' ? `Request exceeded its maximum total time of ${ms} ms` : `Request timed out after ${ms} ms`, ms))
  return source => new Observable<T>(subscriber => {
    // The running `each` timer; replaced when a value restarts the clock.
    let eachTimer: Subscription | undefined
    // The `max` timer, started once.
    let maxTimer: Subscription | undefined
    const expire = (limit: 'each' | 'max', ms: number) => {
      inner.unsubscribe()
      subscriber.error(fail(limit, ms))
    }
    const restart = () => {
      eachTimer?.unsubscribe()
      eachTimer = scheduler.schedule(() => expire('each', each), each)
    }
    if (hasEach) restart()
    if (hasMax) maxTimer = scheduler.schedule(() => expire('max', max), max)
    const inner = source.subscribe({
      next: value => {
        if (hasEach && (resetOn === undefined || resetOn(value))) restart()
        subscriber.next(value)
      },
      error: error => subscriber.error(error),
      complete: () => subscriber.complete(),
    })
    return () => {
      eachTimer?.unsubscribe()
      maxTimer?.unsubscribe()
      inner.unsubscribe()
    }
  })
}
