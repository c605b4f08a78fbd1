import { isObservable, type Observable, type Subscription } from './rx.ts'
import { InternalError } from './jsonrpc/errors.ts'
import type { IncomingWatch } from './request-watch.ts'

/** What a handler may return: a value, a Promise of one, or an Observable whose last value counts. */
export type Outcome<T> = T | PromiseLike<T> | Observable<T>

/**
 * Where {@link settleOutcome} delivers: exactly one of the two, once, with the context it was given
 * (so one observer, made once, serves every request: the sync path allocates nothing).
 */
export interface OutcomeObserver<T, C> {
  value(context: C, result: T): void
  error(context: C, error: unknown): void
}

/** True for anything with a `then` method. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

/**
 * Settles a handler's outcome, once: a value at once, a PromiseLike when it settles, an
 * Observable's last value when it completes (an `InternalError` when it completes with none).
 * Returns what stops an Observable's work (unsubscribing it), undefined for the others. The one
 * place a handler's value / Promise / Observable becomes one answer (a handler that throws is
 * caught where it is called, and goes to the same `error`): the connection, the modern and
 * sessionless paths and the tasks all go through it. A value costs nothing beyond the call.
 */
export function settleOutcome<T, C>(outcome: Outcome<T>, context: C, observer: OutcomeObserver<T, C>): Subscription | undefined {
  if (isObservable(outcome)) {
    let last: T | undefined
    let hasValue = false
    return (outcome as Observable<T>).subscribe({
      next: value => { last = value; hasValue = true },
      error: error => observer.error(context, error),
      complete: () => hasValue ? observer.value(context, last as T) : observer.error(context, new InternalError('Handler completed without a result')),
    })
  }
  if (isPromiseLike(outcome)) (outcome as PromiseLike<T>).then(value => observer.value(context, value), error => observer.error(context, error))
  else observer.value(context, outcome as T)
  return undefined
}

/**
 * Runs an incoming request's handler and settles its outcome into `observer` with `context` (a
 * throw goes to the same `error`), keeping what stops an Observable's work on the request. When
 * the request is watched (telemetry), the call and the Observable's subscription both run inside
 * what the watch makes current. The connection and the sessionless path both start handlers here.
 */
export function startHandler<P, R extends { watch: IncomingWatch | undefined; subscription: Subscription | undefined }, C>(
  handler: (params: P, request: R) => unknown, params: P, request: R, context: C, observer: OutcomeObserver<unknown, C>,
): void {
  const watch = request.watch
  if (watch === undefined) return run(handler, params, request, context, observer)
  watch.run(() => run(handler, params, request, context, observer))
}

function run<P, R extends { subscription: Subscription | undefined }, C>(handler: (params: P, request: R) => unknown, params: P, request: R, context: C, observer: OutcomeObserver<unknown, C>): void {
  let outcome: unknown
  try {
    outcome = handler(params, request)
  } catch (error) {
    return observer.error(context, error)
  }
  request.subscription = settleOutcome(outcome, context, observer)
}
