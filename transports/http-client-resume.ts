import type { RequestId } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, FrameTooLargeError } from '../lib/jsonrpc/errors.ts'
import { deliverEvent, type HttpClientCore } from './http-client-core.ts'
import { readSseEvents, tooLarge } from './http-client-body.ts'
import { getStream } from './http-client-get.ts'
import { maxReconnects, reconnectDelay, sleep } from './http-client-retry.ts'

/**
 * Reads the SSE answer of a Streamable HTTP POST; when it drops before every request it carries
 * is answered, resumes it with a GET from its last event id (`Last-Event-ID`), after the server's
 * `retry` or the backoff of `http-client-retry.ts`, up to `reconnect.retries` times in a row.
 * Rejects when an event is over the size limit (resuming would replay it); ends the transport
 * with ConnectionClosedError when the stream cannot be resumed.
 */
export async function readSse(core: HttpClientCore, response: Response, pending: RequestId[], attempt = 0, resumeFrom?: string): Promise<void> {
  const waiting = new Set(pending)
  // A POST of one request: what its stream carries is about that request (a batch's is not told apart).
  const related = pending.length === 1 ? pending[0] : undefined
  // A resume that failed keeps the place it tried to resume from.
  let lastEventId = resumeFrom
  let retry: number | undefined
  try {
    await readSseEvents(response, event => {
      if (event.id !== undefined) lastEventId = event.id
      if (event.retry !== undefined) retry = event.retry
      deliverEvent(core, event, waiting, related)
    }, core.maxMessageSize)
  } catch (error) {
    // Resuming would replay the same oversized event: the requests still owed fail instead.
    if (error instanceof FrameTooLargeError) throw tooLarge(error, `The response stream of POST ${core.url}`)
    // Otherwise a dropped connection: resumed below if anything is still owed.
  }
  if (core.isClosed || waiting.size === 0 || lastEventId === undefined) return
  const maxRetries = maxReconnects(core.options)
  if (attempt >= maxRetries) return core.fail(new ConnectionClosedError('The response stream dropped and could not be resumed'))
  await sleep(reconnectDelay(core.options, attempt, retry), core.options.scheduler, core.abort.signal)
  const resumed = await getStream(core, lastEventId)
  if (resumed !== undefined) return readSse(core, resumed, [...waiting], attempt + 1, lastEventId)
  return readSse(core, new Response(null), [...waiting], attempt + 1, lastEventId)
}
