import type { JsonRpcMessage, RequestId } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import type { RefusedIds } from '../lib/http/refusal.ts'
import type { Reply } from '../lib/transport.ts'
import { JSON_HEADERS, answerRefusal, type Exchange } from './http-exchange.ts'
import type { HttpListenerCore } from './http-listener.ts'
import { requestInfo } from './request-info.ts'

/**
 * A POST on a `stateless` listener: handed to the server with a reply of its own, served without a
 * session, answered with one JSON body (202 for notifications alone, or when the request was
 * cancelled; 400 with the error about the body as a whole, a batch for one). A POST carrying
 * requests is held open until answered, counted against its client's `maxExchangesPerClient` (429)
 * and the listener's `maxExchanges` (503).
 */
export async function postStateless(core: HttpListenerCore, exchange: Exchange, payload: unknown, requestIds: RequestId[], answers: RefusedIds): Promise<void> {
  // Requests are held open until answered: each POST of them counts against its client.
  const isHeld = requestIds.length > 0
  const client = core.guard.clientKey(exchange)
  if (isHeld) {
    const full = core.sessions.hold(client, answers)
    if (full !== undefined) return answerRefusal(exchange, full)
  }
  const reply = new JsonReply(requestIds, exchange)
  try {
    core.requests.next({ message: payload, principal: exchange.principal, requestInfo: requestInfo('streamable-http', exchange.headerList(), core.guard.clientAddress(exchange)), reply })
    // What is wrong with the body as a whole is answered at once, on this POST, as 400.
    if (reply.bodyError !== undefined) return exchange.reply(400, JSON_HEADERS, reply.bodyError)
    if (!isHeld) return exchange.reply(202, {})
    const result = await reply.answer
    if (result === undefined) exchange.reply(202, {})
    else exchange.reply(200, JSON_HEADERS, result)
  } finally {
    reply.close()
    if (isHeld) core.sessions.held.release(client)
  }
}

/**
 * The reply of a stateless POST: the response to its request, kept for one JSON body. Notifications
 * (progress, logs) are dropped: a JSON body has no room for them. An error with no id is about the
 * body as a whole.
 */
class JsonReply implements Reply {
  /** The error about the body as a whole (JSON text), when the server answered one. */
  bodyError: string | undefined
  #isDone = false
  #resolve!: (result: string | undefined) => void
  /** The response (JSON text), or undefined when the reply ended without one. */
  readonly answer = new Promise<string | undefined>(resolve => { this.#resolve = resolve })
  #resolveClosed!: () => void
  readonly closed = new Promise<void>(resolve => { this.#resolveClosed = resolve })

  constructor(readonly ids: readonly RequestId[], exchange: Exchange) {
    // The client went away: the request is cancelled.
    exchange.onClose(() => this.close())
  }

  get isClosed(): boolean { return this.#isDone }

  send(message: JsonRpcMessage): void {
    if (this.#isDone) throw new TransportError('The HTTP exchange is over')
    if (!isJsonObject(message) || !('id' in message) || 'method' in message) return
    // Encoded here, so that a result that cannot be encoded fails the send (the server answers -32603 instead).
    const text = JSON.stringify(message)
    if (message.id === null) this.bodyError = text
    else this.#resolve(text)
    this.close()
  }

  /** Ends the reply; without a response it answers 202, as a POST whose request was cancelled. */
  close(): void {
    if (this.#isDone) return
    this.#isDone = true
    this.#resolve(undefined)
    this.#resolveClosed()
  }
}
