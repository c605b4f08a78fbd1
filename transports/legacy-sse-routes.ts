import { draining } from '../lib/http/refusal.ts'
import { principalKey } from '../lib/auth.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { requestsOf } from '../lib/http/requests.ts'
import { legacySessionIdOf, legacySseMessage, legacySseOpen } from '../lib/http/rules.ts'
import { answerRefusal, type Exchange } from './http-exchange.ts'
import type { HttpListenerCore } from './http-listener.ts'
import { LegacySession } from './legacy-sse.ts'
import { requestInfo } from './request-info.ts'

/**
 * `GET /sse` of the legacy HTTP+SSE transport (MCP 2024-11-05): a new session, admitted by the
 * same rule as a Streamable HTTP one (`maxSessionsPerClient`, `maxSessions`), whose stream's
 * first event names where the client POSTs (`/messages?sessionId=…`).
 */
export async function openLegacySse(core: HttpListenerCore, exchange: Exchange): Promise<void> {
  const notAcceptable = legacySseOpen(exchange.header('accept'))
  if (notAcceptable !== undefined) return answerRefusal(exchange, notAcceptable)
  if (core.isDraining) return answerRefusal(exchange, draining())
  const client = core.guard.clientKey(exchange)
  const full = core.sessions.admit(client)
  if (full !== undefined) return answerRefusal(exchange, full)
  const id = core.sessions.newSessionId()
  if (typeof id !== 'string') return answerRefusal(exchange, id)
  const session = core.sessions.register(new LegacySession(id, core.now(), core.sessions.onEnd), client)
  session.principalKey = principalKey(exchange.principal)
  if (core.shared !== undefined) await core.shared.claim(session, 'sse')
  session.attach(exchange, `${core.rules.legacyMessagesPath}?sessionId=${encodeURIComponent(id)}`, core.config.highWaterMark)
  session.remoteAddress = core.guard.clientAddress(exchange)
  core.connections.next(session)
}

/**
 * `POST /messages?sessionId=…` of the legacy HTTP+SSE transport: the body goes to the session
 * (its answers go on the session's stream) and the POST is answered 202. With `auth.authorize` or
 * `rateLimit`, the body is checked first (403, 429).
 */
export async function postLegacySse(core: HttpListenerCore, exchange: Exchange): Promise<void> {
  const id = legacySessionIdOf(exchange.search)
  const session = id === null ? undefined : core.sessions.sessions.get(id)
  const hasSession = session instanceof LegacySession && core.guard.owns(session.principalKey, exchange)
  const refusal = legacySseMessage(hasSession, exchange.header('content-type'))
  if (refusal !== undefined) return answerRefusal(exchange, refusal)
  const legacy = session as LegacySession
  core.sessions.touch(legacy)
  const body = await core.body(exchange)
  if (body === undefined) return
  const decoded = decodeJsonFrame(body, Infinity, core.options.structureLimits)
  const guard = core.guard
  if (decoded.type === 'message' && guard.readsPayloads) {
    if (!guard.authorize(exchange, decoded.message)) return
    const isWithin = guard.withinBudget(exchange, requestsOf(decoded.message).ids.length, null)
    if (isWithin === false || (isWithin !== true && !(await isWithin))) return
  }
  legacy.receiveDecoded(decoded, exchange.principal, requestInfo(legacy.kind, exchange.headerList(), guard.clientAddress(exchange)))
  exchange.reply(202, { 'content-type': 'text/plain' }, 'Accepted')
}
