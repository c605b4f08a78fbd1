import { interval, Subscription, type SchedulerLike } from '../lib/rx.ts'

/**
 * The transports' timers that must not hold the process open (a heartbeat, a sweep, a last-resort
 * terminate): on the scheduler a user passed (a virtual one in tests), or else on a real timer that
 * is unref'd, as Node's and the browsers' timers allow. Awaited waits, which should hold it, use the
 * scheduler option with `asyncScheduler` as the default instead.
 */

/**
 * Calls `tick` every `ms` on `scheduler`, or else on a real timer that does not hold the process
 * open (a listener nobody closed must not keep it alive). Unsubscribing stops it.
 */
export function every(ms: number, scheduler: SchedulerLike | undefined, tick: () => void): Subscription {
  if (scheduler !== undefined) return interval(ms, scheduler).subscribe(tick)
  const timer = setInterval(tick, ms)
  // Node's timers can be unref'd; a browser's or a worker's are plain numbers.
  ;(timer as { unref?: () => void }).unref?.()
  return new Subscription(() => clearInterval(timer))
}

/**
 * Calls `work` once, `ms` from now, on `scheduler`, or else on a real timer that does not hold the
 * process open. Unsubscribing before then cancels it.
 */
export function after(ms: number, scheduler: SchedulerLike | undefined, work: () => void): Subscription {
  if (scheduler !== undefined) return scheduler.schedule(work, ms)
  const timer = setTimeout(work, ms)
  ;(timer as { unref?: () => void }).unref?.()
  return new Subscription(() => clearTimeout(timer))
}

/**
 * The clock of a transport's scheduler option: `Date.now` itself when none was given (it is read
 * per request: sessions touched, rate limits), else the scheduler's (a virtual one in tests).
 */
export function clockOf(scheduler: SchedulerLike | undefined): () => number {
  return scheduler === undefined ? Date.now : () => scheduler.now()
}
