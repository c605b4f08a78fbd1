import { timer, type Observable, type SchedulerLike } from '../rx.ts'

/** An exponential backoff: the first wait and the longest one, in milliseconds. */
export interface BackoffPolicy {
  /** The wait before the first retry; each later one doubles it. */
  initialDelayMs: number
  /** The cap: no wait is longer. */
  maxDelayMs: number
}

/**
 * `policy` with each field it leaves out taken from `defaults` (a user's partial options over a
 * transport's or a client's DEFAULTS). Reads each field once, when called.
 */
export function backoffPolicy(policy: Partial<BackoffPolicy> | undefined, defaults: BackoffPolicy): BackoffPolicy {
  return {
    initialDelayMs: policy?.initialDelayMs ?? defaults.initialDelayMs,
    maxDelayMs: policy?.maxDelayMs ?? defaults.maxDelayMs,
  }
}

/**
 * The wait before retry number `attempt` (0 for the first): `initialDelayMs x 2^attempt`, capped
 * at `maxDelayMs`.
 * @see backoff
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** attempt)
}

/**
 * Waits the backoff of retry number `attempt` (0 for the first) on `scheduler`, then emits 0 and
 * completes: the `delay` of RxJS's `retry`, or a restart's timer. Unsubscribing before then cancels
 * the wait. Time comes only from `scheduler` (default `asyncScheduler`).
 *
 * @example
 * source.pipe(retry({ count: 5, delay: (_error, count) => backoff(count - 1, { initialDelayMs: 500, maxDelayMs: 30_000 }) }))
 * @see backoffDelay
 */
export function backoff(attempt: number, policy: BackoffPolicy, scheduler?: SchedulerLike): Observable<0> {
  return timer(backoffDelay(attempt, policy), scheduler)
}
