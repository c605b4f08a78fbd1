import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, FrameTooLargeError, HttpStatusError, TransportError } from '../lib/jsonrpc/errors.ts'
import { UnauthorizedError } from '../lib/unauthorized-error.ts'
import { messageOf, type HttpClientCore } from './http-client-core.ts'
import { readSseEvents, tooLarge } from './http-client-body.ts'
import { discardBody } from '../lib/http/discard-body.ts'

/**
 * The legacy HTTP+SSE client (MCP 2024-11-05): GET the SSE stream, which names the endpoint to
 * POST to in its first `endpoint` event and carries every message of the server.
 */

/**
 * Opens the SSE stream at `url`: resolves with the endpoint its `endpoint` event names (which must
 * be on `url`'s origin), rejects when the GET fails or the stream ends without one. Messages on
 * the stream go to the connection; when the stream ends, the transport ends.
 */
export function openLegacy(core: HttpClientCore, url: URL): Promise<URL> {
  return new Promise<URL>((resolve, reject) => {
    void (async () => {
      let response: Response
      try {
        response = await core.fetch(url, { method: 'GET', headers: core.headers({ accept: 'text/event-stream' }), signal: core.abort.signal })
      } catch (error) {
        reject(new TransportError(`GET ${url} failed: ${messageOf(error)}`, { cause: error }))
        return
      }
      if (!response.ok) {
        discardBody(response)
        reject(UnauthorizedError.fromResponse(response, url, 'GET') ?? new HttpStatusError(`GET ${url} answered ${response.status}`, response.status))
        return
      }
      let hasEndpoint = false
      // Set when the stream carried an event over the size limit: the transport ends with it.
      let failure: unknown
      try {
        await readSseEvents(response, event => {
          if (event.event === 'endpoint' && !hasEndpoint) {
            const endpoint = new URL(event.data, url)
            // The endpoint must be on the server we connected to, not one an attacker names.
            if (endpoint.origin !== url.origin) return reject(new TransportError(`The endpoint ${endpoint} is not on ${url.origin}`))
            hasEndpoint = true
            resolve(endpoint)
          } else if (event.event === undefined || event.event === 'message') {
            core.emit(event.data)
          }
        }, core.maxMessageSize)
      } catch (error) {
        if (error instanceof FrameTooLargeError) failure = tooLarge(error, `The SSE stream of ${url}`)
        // Otherwise dropped.
      }
      if (!hasEndpoint) reject(failure ?? new TransportError('The SSE stream ended before its endpoint event'))
      if (!core.isClosed) core.fail(failure ?? new ConnectionClosedError('The SSE stream closed'))
    })()
  })
}

/** POSTs one message to the endpoint, once known, with its own `headers`; the answer comes on the stream. */
export async function postLegacy(core: HttpClientCore, payload: JsonRpcPayload, headers?: Record<string, string>): Promise<void> {
  const endpoint = await core.endpoint!
  const response = await core.fetch(endpoint, {
    method: 'POST', headers: core.headers({ 'content-type': 'application/json' }, headers), body: JSON.stringify(payload), signal: core.abort.signal,
  }).catch(error => { throw new TransportError(`POST ${endpoint} failed: ${messageOf(error)}`, { cause: error }) })
  discardBody(response)
  if (!response.ok) throw UnauthorizedError.fromResponse(response, endpoint) ?? new HttpStatusError(`POST ${endpoint} answered ${response.status}`, response.status)
}
