import { FrameTooLargeError } from '../lib/jsonrpc/errors.ts'
import { deliverEvent, type HttpClientCore } from './http-client-core.ts'
import { readSseEvents, tooLarge } from './http-client-body.ts'
import { discardBody } from '../lib/http/discard-body.ts'
import { maxReconnects, reconnectDelay, sleep } from './http-client-retry.ts'

/**
 * Streamable HTTP's GET: the standalone stream for server-initiated messages, opened after
 * initialize and reconnected when it drops (from its last event id, after the server's `retry` or
 * the backoff of `http-client-retry.ts`); and the GET that resumes a stream (`Last-Event-ID`).
 */

/** The GET stream for server-initiated messages, kept open across drops. */
export async function openStandalone(core: HttpClientCore, lastEventId: string | undefined, attempt: number): Promise<void> {
  let retry: number | undefined
  let isAnyEvent = false
  const response = await getStream(core, lastEventId)
  if (core.isClosed) return
  if (response === undefined) {
    // Refused or unreachable (a server restarting, a balancer between instances): tried again,
    // waiting longer each time, from the same place.
    const next = attempt + 1
    if (next > maxReconnects(core.options)) return
    await sleep(reconnectDelay(core.options, next, undefined), core.options.scheduler, core.abort.signal)
    return openStandalone(core, lastEventId, next)
  }
  if (response.status === 405) return
  try {
    await readSseEvents(response, event => {
      isAnyEvent = true
      if (event.id !== undefined) lastEventId = event.id
      if (event.retry !== undefined) retry = event.retry
      deliverEvent(core, event)
    }, core.maxMessageSize)
  } catch (error) {
    // No request to fail here, and a reconnect would replay it: the server is broken, the transport ends.
    if (error instanceof FrameTooLargeError) return core.fail(tooLarge(error, `The GET stream of ${core.url}`))
    // Otherwise dropped: reconnect below.
  }
  if (core.isClosed) return
  const next = isAnyEvent ? 0 : attempt + 1
  if (next > maxReconnects(core.options)) return
  await sleep(reconnectDelay(core.options, next, retry), core.options.scheduler, core.abort.signal)
  return openStandalone(core, lastEventId, next)
}

/**
 * A GET of the session's SSE stream, from `lastEventId` when given: the response, a 405 response
 * (the server offers no such stream), or undefined when it was refused, was no event stream, or
 * failed (the transport closed, the server unreachable).
 */
export async function getStream(core: HttpClientCore, lastEventId: string | undefined): Promise<Response | undefined> {
  if (core.isClosed) return undefined
  try {
    const response = await core.fetch(core.url, {
      method: 'GET',
      headers: core.headers(lastEventId === undefined ? { accept: 'text/event-stream' } : { accept: 'text/event-stream', 'last-event-id': lastEventId }),
      signal: core.abort.signal,
    })
    if (response.status === 405) return response
    if (!response.ok || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) { discardBody(response); return undefined }
    return response
  } catch {
    return undefined
  }
}
