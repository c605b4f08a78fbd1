import { Observable, type MonoTypeOperatorFunction } from '../rx.ts'

/**
 * Calls `onCancel` when the subscriber leaves before the source completed or errored: the
 * moment a request must be cancelled on the wire.
 *
 * Emits, completes and errors as the source does. `onCancel` runs at most once, after the source
 * has been unsubscribed, and never when the source finished by itself.
 *
 * @example
 * send$.pipe(cancelOnUnsubscribe(() => connection.notify('notifications/cancelled', { requestId })))
 * @see withTimeout
 */
export function cancelOnUnsubscribe<T>(onCancel: () => void): MonoTypeOperatorFunction<T> {
  return source => new Observable<T>(subscriber => {
    // Set once the source has completed or errored: nothing left to cancel.
    let isFinished = false
    const inner = source.subscribe({
      next: value => subscriber.next(value),
      error: error => { isFinished = true; subscriber.error(error) },
      complete: () => { isFinished = true; subscriber.complete() },
    })
    return () => {
      inner.unsubscribe()
      if (!isFinished) { isFinished = true; onCancel() }
    }
  })
}
