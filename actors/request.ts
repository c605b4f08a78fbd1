import { Observable, from, isObservable, lastValueFrom, of } from '../lib/rx.ts'
import { isPromiseLike, type Outcome } from '../lib/outcome.ts'

/** What a handler may return: a value, a Promise of one, or an Observable whose last value counts. */
export type HandlerOutcome<T> = Outcome<T>
export { isPromiseLike }

/**
 * Runs a handler and maps its outcome, keeping its kind: a value stays a value, a Promise a
 * Promise, an Observable an Observable (so cancellation still reaches the handler's Observable).
 *
 * `project` turns a result into what goes on the wire; `recover` turns a failure (thrown
 * synchronously, rejected, or errored) into a result, or rethrows to make it a JSON-RPC error.
 * This is the containment of the request actor: whatever the handler does, the session lives on.
 *
 * @example
 * mapOutcome(() => tool.handler(args, ctx), toResult, error => ({ content: [...], isError: true }))
 */
export function mapOutcome<T, R>(run: () => HandlerOutcome<T>, project: (value: T) => R, recover: (error: unknown) => R): HandlerOutcome<R> {
  let outcome: HandlerOutcome<T>
  try {
    outcome = run()
  } catch (error) {
    return recover(error)
  }
  if (isObservable(outcome)) {
    return new Observable<R>(subscriber => {
      // The last value, mapped when the handler completes (earlier values are superseded).
      let last: T | undefined
      let hasValue = false
      return (outcome as Observable<T>).subscribe({
        next: value => { last = value; hasValue = true },
        error: error => {
          try { subscriber.next(recover(error)); subscriber.complete() } catch (failure) { subscriber.error(failure) }
        },
        complete: () => {
          try {
            if (hasValue) subscriber.next(project(last as T))
            else subscriber.next(recover(new Error('The handler completed without a result')))
            subscriber.complete()
          } catch (failure) { subscriber.error(failure) }
        },
      })
    })
  }
  if (isPromiseLike(outcome)) return Promise.resolve(outcome).then(project, recover)
  try {
    return project(outcome as T)
  } catch (error) {
    return recover(error)
  }
}

/** An outcome as a Promise: an Observable's last value, a value or PromiseLike as it resolves. */
export function outcomePromise<T>(outcome: HandlerOutcome<T>): Promise<T> {
  return isObservable(outcome) ? lastValueFrom(outcome) : Promise.resolve(outcome)
}

/** An outcome as an Observable: itself, a PromiseLike's value, or a value (for middleware). */
export function outcomeObservable<T>(outcome: HandlerOutcome<T>): Observable<T> {
  if (isObservable(outcome)) return outcome
  if (isPromiseLike(outcome)) return from(outcome as PromiseLike<T>)
  return of(outcome as T)
}
