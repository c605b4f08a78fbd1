/**
 * A listen stream that outlives reconnections (with `ClientOptions.reconnect`). MCP 2026-07-28
 * subscriptions: a server keeps no subscription across a reconnection (on stdio the client MUST
 * send subscriptions/listen again), nor does a new legacy session: a stream that a drop ended goes
 * again on the next connection, which acknowledges it anew.
 *
 * ```
 * connection 1 ── listen ── events ──▶ drop (ConnectionClosedError, not closing): quiet
 * connection 2 ── listen ── events ──▶ ...
 * server ends it / client closes ──▶ complete      reconnecting gives up ──▶ ConnectionClosedError
 * ```
 */
import { Observable, filter, type Subscription } from '../../lib/rx.ts'
import type { Connection } from '../../lib/connection.ts'
import { ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'
import type { ListenEvent } from './api.ts'

/**
 * The events of `listenOn` on each live connection of `connections`, in turn. Completes when a
 * stream completes (the server ended it, or the client closed) or when no connection comes any
 * more and `isClosing()`; errors with a stream's error unless it is a drop of its connection, and
 * with ConnectionClosedError when no connection comes any more while not closing. Unsubscribing
 * ends the stream in place and stops following the connections.
 */
export function listenAcross(connections: Observable<Connection>, listenOn: (connection: Connection) => Observable<ListenEvent>, isClosing: () => boolean): Observable<ListenEvent> {
  return new Observable<ListenEvent>(subscriber => {
    /** The stream on the connection live now. */
    let stream: Subscription | undefined
    const following = connections.pipe(filter(connection => !connection.isClosed)).subscribe({
      next: connection => {
        stream?.unsubscribe()
        stream = listenOn(connection).subscribe({
          next: event => subscriber.next(event),
          // The server ended it (its result, its cancellation), or the client closed: over for good.
          complete: () => subscriber.complete(),
          error: (error: unknown) => {
            const isDrop = error instanceof ConnectionClosedError && connection.isClosed && !isClosing()
            if (!isDrop) subscriber.error(error)
          },
        })
      },
      // No connection comes any more: the client closed, or reconnecting gave up.
      complete: () => isClosing() ? subscriber.complete()
        : subscriber.error(new ConnectionClosedError('The connection closed while listening, and reconnecting gave up')),
    })
    return () => {
      following.unsubscribe()
      stream?.unsubscribe()
    }
  })
}
