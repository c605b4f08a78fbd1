import type { JsonObject, Meta, RequestId } from './jsonrpc/message.ts'
import type { RequestActorEvent } from './request-logic.ts'
import type { ProgressEvent, RequestEvent } from './operators/progress.ts'
import type { Observable, Subscriber, Subscription } from './rx.ts'

/** One incoming request, watched (see `ConnectionObserver.incoming`, lib/request-observer.ts). */
export interface IncomingWatch {
  /** Runs the request's handler, inside whatever the watcher makes current (its span). */
  run<T>(work: () => T): T
  /**
   * How the request goes: `progress` as it is sent, then one end: `result` (the value answered),
   * `error` (the error answered, or the refusal of a request that never ran), or `cancel` (stopped
   * unanswered: cancelled by the peer, or the connection closed). Nothing after the end.
   */
  event(event: RequestActorEvent): void
}

/** One outgoing request, watched (see `ConnectionObserver.outgoing`, lib/request-observer.ts). */
export interface OutgoingWatch {
  /** Added to the request's `_meta` (over what the caller gave). */
  readonly meta?: Meta
  /** The request went out with this id. */
  sent?(id: RequestId): void
  /** A progress notification for the request arrived. */
  progress?(event: ProgressEvent): void
  /**
   * How it ended: its result, the error the caller got (a JSON-RPC error, a timeout, a
   * cancellation, the connection closing), or `abandoned` when the caller stopped waiting first.
   */
  end(outcome: OutgoingOutcome): void
}

export type OutgoingOutcome =
  | { readonly type: 'result'; readonly result: JsonObject }
  | { readonly type: 'error'; readonly error: unknown }
  | { readonly type: 'abandoned' }

/** `_meta` with `added` over it (the watcher's trace context over the caller's own). */
export function withMeta(meta: Meta | undefined, added: Meta | undefined): Meta | undefined {
  return added === undefined ? meta : meta === undefined ? added : { ...meta, ...added }
}

/**
 * `source` (an outgoing request's events) to `subscriber`, with `watch` told how it ends: its
 * result, its error, or `abandoned` when the subscriber leaves first.
 */
export function watchOutgoing<R extends JsonObject>(source: Observable<RequestEvent<R>>, watch: OutgoingWatch, subscriber: Subscriber<RequestEvent<R>>): Subscription {
  let isEnded = false
  const subscription = source.subscribe({
    next: event => {
      if (event.type === 'result') { isEnded = true; watch.end({ type: 'result', result: event.result }) }
      else if (event.type === 'progress') watch.progress?.(event)
      subscriber.next(event)
    },
    error: error => {
      isEnded = true
      watch.end({ type: 'error', error })
      subscriber.error(error)
    },
    complete: () => subscriber.complete(),
  })
  subscription.add(() => { if (!isEnded) { isEnded = true; watch.end({ type: 'abandoned' }) } })
  return subscription
}
