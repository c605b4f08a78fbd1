/**
 * The timeouts of an outgoing request (connection.ts): the request's own `timeout` and
 * `maxTotalTimeout`, else the connection's, on the connection's clock, restarted by progress
 * unless told not to, and failing with the call site's TimeoutError.
 */
import type { Observable } from './rx.ts'
import type { JsonObject } from './jsonrpc/message.ts'
import type { RequestEvent } from './operators/progress.ts'
import { withTimeout } from './operators/with-timeout.ts'
import { DEFAULT_REQUEST_TIMEOUT, type ConnectionOptions, type RequestOptions } from './connection-contract.ts'
import type { CallSite } from './call-site.ts'

/**
 * `source` (a request's events) bounded by its timeouts: `timeout` per wait (default
 * DEFAULT_REQUEST_TIMEOUT; 0 or less for none), reset by each progress event unless
 * `resetTimeoutOnProgress` is false, and `maxTotalTimeout` overall. Errors with the TimeoutError
 * `callSite` makes; `source` itself when neither limit applies (no operator added).
 */
export function withRequestTimeout<R extends JsonObject>(source: Observable<RequestEvent<R>>, options: RequestOptions | undefined, own: ConnectionOptions, callSite: CallSite): Observable<RequestEvent<R>> {
  const timeout = options?.timeout ?? own.timeout ?? DEFAULT_REQUEST_TIMEOUT
  const max = options?.maxTotalTimeout
  if (!(timeout > 0) && max === undefined) return source
  const resetOnProgress = options?.resetTimeoutOnProgress !== false
  return source.pipe(withTimeout<RequestEvent<R>>({
    each: timeout,
    max,
    // The actor system's clock when given one (a server's runs on ServerOptions.scheduler).
    scheduler: own.scheduler ?? own.actors?.system.scheduler,
    resetOn: resetOnProgress ? isProgress : never,
    // bind, not an arrow: no new named function per request (tsx names every arrow it sees).
    error: callSite.timeout.bind(callSite),
  }))
}

const isProgress = (event: RequestEvent<JsonObject>) => event.type === 'progress'
const never = () => false
