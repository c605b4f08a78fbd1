import { principalKey } from '../lib/auth.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { requestsOf } from '../lib/http/requests.ts'
import { answersOf, checkPostBody, checkRequestIds, classifyPost } from '../lib/http/rules.ts'
import { UNKNOWN_LAST_EVENT_ID, draining, tooManyStreams } from '../lib/http/refusal.ts'
import { JSON_HEADERS, answerRefusal, type Exchange } from './http-exchange.ts'
import { HttpSession } from './http-session.ts'
import type { HttpListenerCore } from './http-listener.ts'
import { postModern } from './http-modern-post.ts'
import { postStateless } from './http-stateless.ts'
import { requestInfo } from './request-info.ts'

/**
 * A POST to the MCP endpoint whose Accept and Content-Type passed (lib/http/rules.ts `mcpRequest`):
 * its body is read and checked, its caller authorized and budgeted, then it is classified
 * (`classifyPost`) and served: modern-era (http-modern-post.ts), stateless (http-stateless.ts), an
 * initialize that opens a session, or a request of a session, answered as one JSON body
 * (`jsonResponse`) or on an SSE stream of its own.
 */
export async function postMcp(core: HttpListenerCore, exchange: Exchange): Promise<void> {
  const body = await core.body(exchange)
  if (body === undefined) return
  const decoded = decodeJsonFrame(body, Infinity, core.options.structureLimits)
  const requests = decoded.type === 'message' ? requestsOf(decoded.message) : undefined
  const invalid = checkPostBody(decoded, requests)
  if (invalid !== undefined) return answerRefusal(exchange, invalid)
  const payload = (decoded as { message: unknown }).message
  const { ids, isInitialize, cancelled } = requests!
  // JSON-RPC 2.0 §5: an error about a request carries its id whenever the request had one; a
  // refused batch is answered with one error per request it held (null when it held none).
  const answers = answersOf(payload, ids)
  const guard = core.guard
  if (!guard.authorize(exchange, payload)) return
  // Answered synchronously unless the budget is shared (Redis): no await per request without one.
  const isWithin = guard.withinBudget(exchange, ids.length, answers)
  if (isWithin === false || (isWithin !== true && !(await isWithin))) return
  const action = classifyPost(core.rules, payload, requests!, exchange.header('mcp-session-id'), exchange.header('mcp-protocol-version'), answers)
  switch (action.type) {
    case 'refuse': return answerRefusal(exchange, action)
    case 'post-modern': return postModern(core, exchange, payload)
    case 'post-stateless': return postStateless(core, exchange, payload, ids, answers)
  }
  let session: HttpSession
  if (action.type === 'post-initialize') {
    // Draining (a rolling restart): the balancer should have moved away; the client connects again.
    if (core.isDraining) return answerRefusal(exchange, draining(answers))
    // Undefined for a client that cannot be told apart (no principal, no address): the total only.
    const client = guard.clientKey(exchange)
    const full = core.sessions.admit(client, answers)
    if (full !== undefined) return answerRefusal(exchange, full)
    const id = core.sessions.newSessionId(answers)
    if (typeof id !== 'string') return answerRefusal(exchange, id)
    session = core.sessions.register(new HttpSession(id, core.config, core.now(), core.sessions.onEnd), client)
    session.principalKey = principalKey(exchange.principal)
    session.initializeRequestId = ids[0]
    session.remoteAddress = guard.clientAddress(exchange)
    if (core.shared !== undefined) await core.shared.claim(session, 'streamable-http')
    core.connections.next(session)
  } else {
    const found = core.session(exchange, answers)
    if (found === undefined) return
    session = found
  }
  const headers = { 'mcp-session-id': session.id }
  const reused = checkRequestIds(ids, id => session.isInFlight(id), session.id, answers)
  if (reused !== undefined) return answerRefusal(exchange, reused)
  // This POST, for `ctx.requestInfo` of each request it carries: its headers, made only when read.
  const info = requestInfo(session.kind, exchange.headerList(), isInitialize ? session.remoteAddress : guard.clientAddress(exchange))
  if (ids.length === 0) {
    const error = session.receive(payload, exchange.principal, info)
    if (error !== undefined) return frameErrorReply(exchange, session.id, error)
    session.abandon(cancelled)
    return exchange.reply(202, headers)
  }
  if (core.options.jsonResponse) {
    const answer = session.expectJson(ids, Array.isArray(payload))
    const error = session.receive(payload, exchange.principal, info)
    if (error !== undefined) { session.forget(ids); return frameErrorReply(exchange, session.id, error) }
    session.abandon(cancelled)
    const result = await answer
    // Every request of the POST was cancelled: nothing to answer with.
    return result === undefined ? exchange.reply(202, headers) : exchange.reply(200, { ...headers, ...JSON_HEADERS }, JSON.stringify(result))
  }
  const stream = session.openPostStream(ids, exchange.header('mcp-protocol-version') ?? undefined)
  if (stream === undefined) return answerRefusal(exchange, tooManyStreams(session.id, answers))
  const error = session.receive(payload, exchange.principal, info, stream)
  // An error about the whole body (a batch where batches are not allowed): on this POST, as 400.
  if (error !== undefined) { session.drop(stream); return frameErrorReply(exchange, session.id, error) }
  session.abandon(cancelled)
  session.attach(stream, exchange)
}

/** An error about a POST's body as a whole (a batch where batches are not allowed): 400, with the error. */
function frameErrorReply(exchange: Exchange, sessionId: string, error: JsonRpcPayload): void {
  exchange.reply(400, { 'mcp-session-id': sessionId, ...JSON_HEADERS }, JSON.stringify(error))
}

/**
 * A GET whose Accept passed: `Last-Event-ID` resumes a stream of its session (404 when it names
 * none the session can replay), else a standalone stream opens (429 when the session holds
 * `maxStreamsPerSession`, all attached).
 */
export async function getStream(core: HttpListenerCore, exchange: Exchange): Promise<void> {
  const found = core.session(exchange)
  if (found === undefined) return
  const lastEventId = exchange.header('last-event-id')
  if (lastEventId !== null) {
    if (!(await found.resume(exchange, lastEventId))) answerRefusal(exchange, UNKNOWN_LAST_EVENT_ID)
    return
  }
  if (!found.openStandalone(exchange, exchange.header('mcp-protocol-version') ?? undefined)) answerRefusal(exchange, tooManyStreams(found.id))
}

/** A DELETE: the session it names ends (its streams, stored events and record with it). */
export function deleteSession(core: HttpListenerCore, exchange: Exchange): void {
  const found = core.session(exchange)
  if (found === undefined) return
  found.end()
  exchange.reply(200, {})
}
