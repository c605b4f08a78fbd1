import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, HttpStatusError, TransportError } from '../lib/jsonrpc/errors.ts'
import { UnauthorizedError } from '../lib/unauthorized-error.ts'
import { ERROR_BODY_LIMIT, messageOf, requestIdsOf, type HttpClientCore } from './http-client-core.ts'
import { readBody, tooLarge } from './http-client-body.ts'
import { discardBody } from '../lib/http/discard-body.ts'
import { readSse } from './http-client-resume.ts'
import { openStandalone } from './http-client-get.ts'
import { openLegacy, postLegacy } from './http-client-legacy.ts'

/**
 * Streamable HTTP's POST in a session (MCP 2025-03-26 onward): each message is POSTed with
 * `Accept: application/json, text/event-stream`; a JSON answer is read whole, an SSE answer event
 * by event (`http-client-resume.ts`). The session id from initialize goes on every later request.
 * A server that refuses the first initialize POST (400, 404, 405) is spoken to in legacy HTTP+SSE
 * from then on; one that forgot the session (404) gets initialize again, once.
 */

/**
 * One POST, with a signal of its own for as long as it lasts (see `HttpClientCore.posts`), and
 * the message's own `headers` (`SendOptions.headers`).
 */
export async function post(core: HttpClientCore, payload: JsonRpcPayload, headers?: Record<string, string>, isRetry = false): Promise<void> {
  const { controller, release } = core.postSignal()
  try {
    return await postOnce(core, payload, headers, isRetry, controller.signal)
  } finally {
    release()
  }
}

async function postOnce(core: HttpClientCore, payload: JsonRpcPayload, messageHeaders: Record<string, string> | undefined, isRetry: boolean, signal: AbortSignal): Promise<void> {
  const isInitialize = !Array.isArray(payload) && 'method' in payload && payload.method === 'initialize'
  if (isInitialize) core.initializePayload = payload
  let response: Response
  try {
    response = await core.fetch(core.url, {
      method: 'POST',
      headers: core.headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, messageHeaders),
      body: JSON.stringify(payload),
      signal,
    })
  } catch (error) {
    if (core.isClosed) return
    throw new TransportError(`POST ${core.url} failed: ${messageOf(error)}`, { cause: error })
  }
  if (core.mode === undefined && isInitialize && (response.status === 400 || response.status === 404 || response.status === 405)) {
    // MCP backwards compatibility: an old server refuses the POST; talk HTTP+SSE to it instead.
    discardBody(response)
    core.mode = 'sse'
    core.endpoint = openLegacy(core, core.sseUrl ?? core.url)
    return postLegacy(core, payload, messageHeaders)
  }
  // A refused request that is not initialize says nothing of the transport (the 4xx of a probe).
  if (core.mode === undefined && (response.ok || isInitialize)) core.mode = 'streamable-http'
  const sessionId = response.headers.get('mcp-session-id')
  if (sessionId !== null && core.sessionId === undefined) core.sessionId = sessionId
  if (response.status === 202) { discardBody(response); return afterNotification(core, payload) }
  if (response.status === 404 && core.sessionId !== undefined) {
    discardBody(response)
    if (isRetry || core.options.reinitializeOnExpiry === false || core.initializePayload === undefined) {
      return core.fail(new ConnectionClosedError('The server no longer knows this session (404); connect again'))
    }
    await reinitialize(core)
    return post(core, payload, messageHeaders, true)
  }
  if (!response.ok) return await refused(core, response, payload)
  const contentType = response.headers.get('content-type') ?? ''
  if (contentType.includes('text/event-stream')) {
    // Awaited, so a stream that fails (an oversized event) fails the send, and so the requests it carries.
    await readSse(core, response, requestIdsOf(payload))
  } else if (contentType.includes('application/json')) {
    core.emit(await readBody(response, core.maxMessageSize).catch(error => { throw tooLarge(error, `POST ${core.url}`) }))
  } else {
    discardBody(response)
  }
}

/**
 * A POST answered with an error status. A 401 (or 403 `insufficient_scope`) fails the send with
 * an UnauthorizedError carrying the challenge, whatever the body; a JSON-RPC error body answers
 * the request (a modern server's -32022, -32020, -32601; a legacy one's session errors), handed
 * on so the caller sees the server's error; anything else fails the send with an HttpStatusError
 * naming the status.
 */
export async function refused(core: HttpClientCore, response: Response, payload: JsonRpcPayload): Promise<void> {
  const unauthorized = UnauthorizedError.fromResponse(response, core.url)
  if (unauthorized !== undefined) { discardBody(response); throw unauthorized }
  const text = await readBody(response, ERROR_BODY_LIMIT).then(bytes => new TextDecoder().decode(bytes), () => '')
  if (response.headers.get('content-type')?.includes('application/json') && text.includes('"jsonrpc"')) return emitErrorFor(core, payload, text)
  throw new HttpStatusError(`POST ${core.url} answered ${response.status} ${response.statusText}${text ? `: ${text.slice(0, 200)}` : ''}`, response.status)
}

/** Starts a new session with the first initialize's parameters; its answer stays here. */
async function reinitialize(core: HttpClientCore): Promise<void> {
  core.sessionId = undefined
  const response = await core.fetch(core.url, {
    method: 'POST',
    headers: core.headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
    body: JSON.stringify(core.initializePayload),
    signal: core.abort.signal,
  })
  const sessionId = response.headers.get('mcp-session-id')
  if (!response.ok || sessionId === null) {
    discardBody(response)
    throw new ConnectionClosedError(`The session expired and initialize failed again (${response.status})`)
  }
  core.sessionId = sessionId
  // The connection already has its initialize answer: this one is read and dropped.
  await readBody(response, core.maxMessageSize)
  const initialized = await core.fetch(core.url, {
    method: 'POST',
    headers: core.headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    signal: core.abort.signal,
  })
  discardBody(initialized)
}

function emitErrorFor(core: HttpClientCore, payload: JsonRpcPayload, text: string): void {
  try {
    const body = JSON.parse(text)
    const ids = requestIdsOf(payload)
    // The server answered with id null; pin it to the request so its caller is not left waiting.
    if (body?.id === null && ids.length === 1) body.id = ids[0]
    core.incoming.next({ type: 'message', message: body, requestInfo: core.requestInfo })
  } catch { /* not JSON after all */ }
}

function afterNotification(core: HttpClientCore, payload: JsonRpcPayload): void {
  const isInitialized = !Array.isArray(payload) && 'method' in payload && payload.method === 'notifications/initialized'
  if (isInitialized && core.options.openStandaloneStream !== false && !core.isStandaloneOpen) {
    core.isStandaloneOpen = true
    void openStandalone(core, undefined, 0)
  }
}
