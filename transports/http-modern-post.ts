import { checkModernPost } from '../lib/http/modern-rules.ts'
import { answerRefusal, type Exchange } from './http-exchange.ts'
import type { HttpListenerCore } from './http-listener.ts'
import { ModernReply } from './http-modern.ts'
import { requestInfo } from './request-info.ts'

/**
 * A modern-era POST (MCP 2026-07-28; see isModernPost), checked by the rules of its revision
 * (lib/http/modern-rules.ts `checkModernPost`: a notification is answered 202, a request breaking
 * them 400) and handed to the server as a one-exchange transport, held open (and counted against
 * its client's `maxExchangesPerClient`) until it is answered or, for a listen stream, ends.
 */
export function postModern(core: HttpListenerCore, exchange: Exchange, payload: unknown): void {
  const message = payload as Record<string, unknown>
  const { rules } = core
  const action = checkModernPost(message, exchange.header('mcp-protocol-version'), exchange.header('mcp-method'), exchange.header('mcp-name'), rules.modernVersions, rules.versions)
  if (action.type === 'refuse') return answerRefusal(exchange, action)
  if (action.type === 'modern-notification') return exchange.reply(202, {})
  // Held open until answered, for as long as a listen stream lasts: each counts against its client.
  const client = core.guard.clientKey(exchange)
  const full = core.sessions.hold(client, message.id as string | number)
  if (full !== undefined) return answerRefusal(exchange, full)
  const reply = new ModernReply(exchange, core.config.highWaterMark, core.options.jsonResponse === true)
  core.exchanges.add(reply)
  void reply.closed.then(() => { core.exchanges.delete(reply); core.sessions.held.release(client) })
  // The POST itself goes with its request: its headers (made when read) and the client's address.
  core.requests.next({ message: payload, principal: exchange.principal, requestInfo: requestInfo('streamable-http', exchange.headerList(), core.guard.clientAddress(exchange)), reply })
}
