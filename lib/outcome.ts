import { isObservable, type Observable, type Subscription } from './rx.ts'
import { InternalError } from './jsonrpc/errors.ts'

/** What a handler may return: a value, a Promise of one, or an Observable whose last value counts. */
export type Outcome<T> = T | PromiseLike<T> | Observable<T>

/** Where {@link settleOutcome} delivers: exactly one of the two, once. */
export interface OutcomeObserver<T> {
  value(result: T): void
  error(error: unknown): void
}

/** True for anything with a `then` method. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

/**
 * Runs a handler and settles its outcome, once: a value at once, a PromiseLike when it settles,
 * an Observable's last value when it completes (an `InternalError` when it completes with none),
 * and a throw of `run` as its error. Returns what stops an Observable's work (unsubscribing it),
 * undefined for the others. The one place a handler's value / Promise / Observable / throw becomes
 * one answer: the connection, the modern and sessionless paths and the tasks all go through it. A
 * value costs nothing beyond the call (no Observable, no Promise), which keeps the per-request path cheap.
 */
export function settleOutcome<T>(run: () => Outcome<T>, observer: OutcomeObserver<T>): Subscription | undefined {
  let outcome: Outcome<T>
  try {
    outcome = run()
  } catch (error) {
    observer.error(error)
    return undefined
  }
  if (isObservable(outcome)) {
    let last: T | undefined
    let hasValue = false
    return (outcome as Observable<T>).subscribe({
      next: value => { last = value; hasValue = true },
      error: error => observer.error(error),
      complete: () => hasValue ? observer.value(last as T) : observer.error(new InternalError('Handler completed without a result')),
    })
  }
  if (isPromiseLike(outcome)) (outcome as PromiseLike<T>).then(value => observer.value(value), error => observer.error(error))
  else observer.value(outcome as T)
  return undefined
}
