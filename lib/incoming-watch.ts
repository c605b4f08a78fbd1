import type { RequestActorEvent } from './request-logic.ts'

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
