import type { JsonObject, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { FrameTooLargeError, ResponseLostError, TransportError } from '../lib/jsonrpc/errors.ts'
import { MetaKey, NAMED_METHODS, encodeHeaderValue, mcpNameOf, requestMeta } from '../lib/schema/modern.ts'
import { deliverEvent, lowerInto, messageOf, type HttpClientCore } from './http-client-core.ts'
import { readBody, readSseEvents, tooLarge } from './http-client-body.ts'
import { discardBody } from '../lib/http/discard-body.ts'
import { refused } from './http-client-post.ts'

/**
 * The POST of a modern request (MCP 2026-07-28: its `_meta` names a protocol version): one POST of
 * its own, outside any session, with the standard request headers read from the message, and no
 * resumption. Closing its response stream is its cancellation.
 */

/** What the headers of a modern request are read from. */
export interface ModernRequest {
  id: RequestId
  method: string
  params: JsonObject | undefined
  version: string
}

/**
 * One modern request as its own POST, with the message's own `headers` (the client's `Mcp-Param-*`
 * ones), the request metadata headers over them, and no session. Settles once its answer was read;
 * rejects with TransportError when the POST fails or its response stream ends before the response
 * (a modern stream is never resumed).
 */
export async function postModern(core: HttpClientCore, payload: JsonRpcPayload, request: ModernRequest, messageHeaders?: Record<string, string>): Promise<void> {
  const { controller, release } = core.postSignal()
  core.modernInFlight.set(request.id, controller)
  try {
    // Outside the session: its own record (see HttpClientCore.headers), no session id.
    const headers: Record<string, string> = {}
    if (core.options.headers !== undefined) lowerInto(headers, core.options.headers)
    if (messageHeaders !== undefined) lowerInto(headers, messageHeaders)
    headers['content-type'] = 'application/json'
    headers.accept = 'application/json, text/event-stream'
    headers['mcp-protocol-version'] = request.version
    headers['mcp-method'] = request.method
    const name = NAMED_METHODS.has(request.method) ? mcpNameOf(request.method, request.params) : undefined
    if (name !== undefined) headers['mcp-name'] = encodeHeaderValue(name)
    let response: Response
    try {
      response = await core.fetch(core.url, { method: 'POST', headers, body: JSON.stringify(payload), signal: controller.signal })
    } catch (error) {
      if (core.isClosed || controller.signal.aborted) return
      throw new TransportError(`POST ${core.url} failed: ${messageOf(error)}`, { cause: error })
    }
    if (response.ok && core.mode === undefined) core.mode = 'streamable-http'
    if (!response.ok) return await refused(core, response, payload)
    const contentType = response.headers.get('content-type') ?? ''
    if (contentType.includes('text/event-stream')) {
      const waiting = new Set([request.id])
      try {
        await readSseEvents(response, event => deliverEvent(core, event, waiting), core.maxMessageSize)
      } catch (error) {
        if (error instanceof FrameTooLargeError) throw tooLarge(error, `The response stream of POST ${core.url}`)
        if (core.isClosed || controller.signal.aborted) return
        throw new ResponseLostError(`The response stream of ${request.method} broke: ${messageOf(error)}`, { cause: error })
      }
      // MCP 2026-07-28: no resumption; a stream that ended early lost its request.
      if (waiting.size > 0 && !core.isClosed && !controller.signal.aborted) {
        throw new ResponseLostError(`The response stream of ${request.method} ended before its response`)
      }
    } else if (contentType.includes('application/json')) {
      core.emit(await readBody(response, core.maxMessageSize).catch(error => { throw tooLarge(error, `POST ${core.url}`) }))
    } else {
      discardBody(response)
    }
  } catch (error) {
    // Our own cancellation ends the POST quietly: the connection stopped waiting for it already.
    if (controller.signal.aborted && !core.isClosed) return
    throw error
  } finally {
    core.modernInFlight.delete(request.id)
    release()
  }
}

/** The request, when `payload` is one modern request (its `_meta` names a protocol version as a string). */
export function modernRequestOf(payload: JsonRpcPayload): ModernRequest | undefined {
  if (Array.isArray(payload) || !('method' in payload) || !('id' in payload)) return undefined
  const version = requestMeta(payload.params)?.[MetaKey.protocolVersion]
  return typeof version === 'string' ? { id: payload.id, method: payload.method, params: payload.params, version } : undefined
}

/** The request id a `notifications/cancelled` names, if `payload` is one. */
export function cancelledRequestOf(payload: JsonRpcPayload): RequestId | undefined {
  if (Array.isArray(payload) || !('method' in payload) || 'id' in payload || payload.method !== 'notifications/cancelled') return undefined
  const id = payload.params?.requestId
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}
