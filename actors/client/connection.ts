import { EMPTY, Observable, catchError, defer, retry, shareReplay, takeUntil, throwError, type SchedulerLike } from '../../lib/rx.ts'
import { backoff, backoffPolicy } from '../../lib/operators/backoff.ts'
import type { Connection } from '../../lib/connection.ts'
import { ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'

/** DEFAULTS of {@link ClientOptions.reconnect}. */
export const RECONNECT_DEFAULTS = { initialDelayMs: 500, maxDelayMs: 30_000, maxRetries: 10 } as const

/** How a client reconnects after its transport drops (see `ClientOptions.reconnect`). */
export interface ReconnectPolicy { initialDelayMs?: number; maxDelayMs?: number; maxRetries?: number }

/** What {@link clientConnections} needs from the client that owns the stream. */
export interface ConnectionSource {
  /** Makes a transport and a started connection over it, with the client's handlers registered. */
  open(): Connection
  /** The legacy handshake on a fresh connection; rejects (the connection closed) when it fails. */
  initialize(connection: Connection): Promise<void>
  /** Off (undefined): a drop ends the stream. */
  reconnect?: ReconnectPolicy
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
 * Never errors: the first handshake's failure, giving up after `maxRetries` and a drop without
 * `reconnect` all complete it (errors go to `reportError`; the first one also to `firstError`).
 * Completes when `closing` emits, closing the connection of a handshake under way.
 */
export function clientConnections(source: ConnectionSource, firstError: (error: unknown) => void): Observable<Connection> {
  const policy = source.reconnect
  const delays = backoffPolicy(policy, RECONNECT_DEFAULTS)
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
      count: policy === undefined ? 0 : policy.maxRetries ?? RECONNECT_DEFAULTS.maxRetries,
      // Counting starts over once a session is operating: each drop gets maxRetries attempts.
      resetOnSuccess: true,
      delay: (error: unknown, attempt: number) => {
        if (!hasConnected) return throwError(() => error)
        if (!(error instanceof DroppedError)) source.reportError(error)
        source.onReconnecting()
        return backoff(attempt - 1, delays, source.scheduler)
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
