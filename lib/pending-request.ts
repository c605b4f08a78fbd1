import type { Subscriber } from './rx.ts'
import type { JsonObject, RequestId } from './jsonrpc/message.ts'
import { isRequestId } from './jsonrpc/guards.ts'
import { ConnectionClosedError } from './jsonrpc/errors.ts'
import type { RequestEvent } from './operators/progress.ts'
import type { IncomingRequest } from './incoming-request.ts'

/** An entry of a connection's pending table: the subscriber waiting for a response. */
export interface PendingRequest {
  subscriber: Subscriber<RequestEvent<JsonObject>>
  method: string
}

/**
 * Fails every request of a connection that closed with `error`: each outgoing one waiting in
 * `pending` errors with a `ConnectionClosedError` (`error` itself when it is one, else one that
 * names it as its cause), each incoming one in `incoming` hears of it (its actor aborts its
 * handler with that error; one without an actor is cancelled with it). Both tables are
 * emptied first, so nothing a subscriber does meanwhile sees an entry twice.
 */
export function failAll(pending: Map<RequestId, PendingRequest>, incoming: Map<RequestId, IncomingRequest>, error: unknown): void {
  const closedError = error instanceof ConnectionClosedError ? error
    : new ConnectionClosedError(error === undefined ? 'Connection closed' : `Connection closed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  const pendingEntries = [...pending.values()]
  pending.clear()
  for (const entry of pendingEntries) entry.subscriber.error(closedError)
  const incomingEntries = [...incoming.values()]
  incoming.clear()
  for (const request of incomingEntries) {
    if (request.actor !== undefined) request.actor.send({ type: 'closed', error: closedError })
    else request.cancel(closedError)
  }
}

/** Hands a `notifications/progress` (its params) to the outgoing request waiting under its token, if any. */
export function deliverProgress(pending: ReadonlyMap<RequestId, PendingRequest>, params: JsonObject | undefined): void {
  const token = params?.progressToken
  const entry = isRequestId(token) ? pending.get(token) : undefined
  if (entry === undefined || typeof params!.progress !== 'number') return
  entry.subscriber.next(params!.total === undefined && params!.message === undefined
    ? { type: 'progress', progress: params!.progress }
    : { type: 'progress', progress: params!.progress, total: params!.total as number | undefined, message: params!.message as string | undefined })
}

/** The text of `notifications/cancelled` for a request whose AbortSignal aborted with `reason`. */
export function abortReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message
  return typeof reason === 'string' ? reason : 'Request aborted'
}
