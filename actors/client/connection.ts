import { EMPTY, Observable, catchError, defer, retry, shareReplay, takeUntil, throwError, type SchedulerLike } from '../../lib/rx.ts'
import { backoffTimer, type Backoff } from '../../lib/operators/retry-policy.ts'
import type { Connection } from '../../lib/connection.ts'
import { ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'

/** DEFAULTS of `ClientOptions.reconnect`: 500 ms doubling to 30 s, no jitter, 10 attempts per drop. */
export const RECONNECT_DEFAULTS: Backoff = Object.freeze({ initial: 500, max: 30_000, factor: 2, jitter: 0, retries: 10 })

/** What {@link clientConnections} needs from the client that owns the stream. */
export interface ConnectionSource {
  /** Makes a transport and a started connection over it, with the client's handlers registered. */
  open(): Connection
  /** The legacy handshake on a fresh connection; rejects (the connection closed) when it fails. */
  initialize(connection: Connection): Promise<void>
  /** The retry policy of reconnects (see `backoff`); off (undefined): a drop ends the stream. */
  reconnect?: Backoff
  /** Where the backoff waits run (default: RxJS's async scheduler). */
  scheduler?: SchedulerLike
  /** True once the client is closing: a connection that closes then has not dropped. */
  isClosing(): boolean
  /** Emits once when the client closes: stops a backoff wait or a handshake under way. */
  closing: Observable<unknown>
  /** Called before each reconnect attempt waits (the session starts over). */
  onReconnecting(): void
  /** Receives each failed reconnect attempt's error, and the error the stream gives up with. */
  reportError(error: unknown): void
}

/** A drop of an operating session: the reason to reconnect, not an error worth reporting. */
class DroppedError extends ConnectionClosedError {}

/**
 * The client's connection as an Observable of live connections: each emission is a connection whose
 * handshake succeeded, the next one follows a drop (after a backoff on `scheduler`, when `reconnect`
 * is on). Hot and replayed (`shareReplay(1)`): a late subscriber gets the latest connection, which
 * may already be closed, so users check `isClosed`.
 *
 * ```
 *   open -> initialize --ok--> emit connection --closed, closing--> complete
 *             |                        '--closed (a drop)--> error --retry: timer(backoff)--> open ...
 *             '--fails: first session? error -> complete; reconnecting? retry as above
 * ```
 *
 * Never errors: the first handshake's failure, giving up after `retries` and a drop without
 * `reconnect` all complete it (errors go to `reportError`; the first one also to `firstError`).
 * Completes when `closing` emits, closing the connection of a handshake under way.
 */
export function clientConnections(source: ConnectionSource, firstError: (error: unknown) => void): Observable<Connection> {
  const policy = source.reconnect
  /** Set once a handshake succeeded: only then is a failure a reason to reconnect. */
  let hasConnected = false
  const session = defer(() => new Observable<Connection>(subscriber => {
    const connection = source.open()
    source.initialize(connection).then(() => {
      hasConnected = true
      subscriber.next(connection)
      // A drop during the handshake is seen here too, since `closed` has resolved already.
      void connection.closed.then(() => source.isClosing() ? subscriber.complete()
        : subscriber.error(new DroppedError('The connection to the server dropped')))
    }, (error: unknown) => subscriber.error(error))
    // Unsubscribed by `closing` (or after an error): the connection goes with the session.
    return () => { if (!connection.isClosed) void connection.close() }
  }))
  return session.pipe(
    retry({
      count: policy === undefined ? 0 : policy.retries,
      // Counting starts over once a session is operating: each drop gets `retries` attempts.
      resetOnSuccess: true,
      delay: (error: unknown, attempt: number) => {
        if (!hasConnected) return throwError(() => error)
        if (!(error instanceof DroppedError)) source.reportError(error)
        source.onReconnecting()
        return backoffTimer(policy!, attempt - 1, source.scheduler)
      },
    }),
    catchError((error: unknown) => {
      if (!hasConnected) firstError(error)
      else if (!(error instanceof DroppedError)) source.reportError(error)
      return EMPTY
    }),
    takeUntil(source.closing),
    // One session shared by every request and notification stream; never reset, so a stream that
    // ended (closed, gave up) is not reopened by a late subscriber.
    shareReplay({ bufferSize: 1, refCount: false }),
  )
}
