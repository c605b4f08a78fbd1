import type { RequestId } from '../lib/jsonrpc/message.ts'
import type { RefusedIds } from '../lib/http/refusal.ts'
import { JSON_HEADERS, answerRefusal, type Exchange } from './http-exchange.ts'
import type { HttpListenerCore } from './http-listener.ts'
import { HttpSession, type SessionConfig } from './http-session.ts'
import { requestInfo } from './request-info.ts'

/** Stateless sessions keep no streams and no events. */
const STATELESS_CONFIG: SessionConfig = { eventStore: undefined, retryMs: 0, highWaterMark: 0, maxStreams: 0, nextStreamId: () => '' }

/**
 * A POST on a `stateless` listener: served by a fresh one-shot session with no id, which ends
 * with its answer (one JSON body; 202 for notifications alone, or when every request was
 * cancelled). A POST carrying requests is held open until answered, counted against its client's
 * `maxExchangesPerClient` (429) and the listener's `maxExchanges` (503).
 */
export async function postStateless(core: HttpListenerCore, exchange: Exchange, payload: unknown, requestIds: RequestId[], answers: RefusedIds): Promise<void> {
  // Requests are held open until answered: each POST of them counts against its client.
  const isHeld = requestIds.length > 0
  const client = core.guard.clientKey(exchange)
  if (isHeld) {
    const full = core.sessions.hold(client, answers)
    if (full !== undefined) return answerRefusal(exchange, full)
  }
  const session = new HttpSession('', STATELESS_CONFIG, 0, () => {})
  session.isStateless = true
  // Per-client limits (the task quotas) count a stateless exchange by its address.
  session.remoteAddress = core.guard.clientAddress(exchange)
  const info = requestInfo(session.kind, exchange.headerList(), session.remoteAddress)
  core.connections.next(session)
  if (requestIds.length === 0) {
    const error = session.receive(payload, exchange.principal, info)
    // Let the notification reach its handler before the one-shot session ends.
    setTimeout(() => session.end(), 0)
    return error !== undefined ? exchange.reply(400, JSON_HEADERS, JSON.stringify(error)) : exchange.reply(202, {})
  }
  const answer = session.expectJson(requestIds, Array.isArray(payload))
  const error = session.receive(payload, exchange.principal, info)
  try {
    if (error !== undefined) return exchange.reply(400, JSON_HEADERS, JSON.stringify(error))
    const result = await answer
    if (result === undefined) exchange.reply(202, {})
    else exchange.reply(200, JSON_HEADERS, JSON.stringify(result))
  } finally {
    session.end()
    core.sessions.held.release(client)
  }
}
