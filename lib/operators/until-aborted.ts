import { Observable, type MonoTypeOperatorFunction } from '../rx.ts'

/**
 * Mirrors the source until `signal` aborts, then errors with the signal's reason (at once when it
 * is aborted already): a request's cancellation as the end of a stream.
 *
 * Emits, completes and errors as the source does. Listens to the signal only while subscribed:
 * the listener is removed when the stream ends in any way, so a long-lived signal keeps none.
 *
 * @example
 * waitForTask$.pipe(untilAborted(ctx.signal))
 * @see cancelOnUnsubscribe
 */
export function untilAborted<T>(signal: AbortSignal): MonoTypeOperatorFunction<T> {
  return source => new Observable<T>(subscriber => {
    if (signal.aborted) {
      subscriber.error(signal.reason)
      return
    }
    const signalOnAbort = () => subscriber.error(signal.reason)
    signal.addEventListener('abort', signalOnAbort, { once: true })
    const inner = source.subscribe(subscriber)
    return () => {
      signal.removeEventListener('abort', signalOnAbort)
      inner.unsubscribe()
    }
  })
}
