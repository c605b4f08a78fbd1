import type { Principal } from '../lib/auth.ts'
import type { Observable } from '../lib/rx.ts'
import type { Inbound, RequestInfo, SharedSession, Transport } from '../lib/transport.ts'
import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { encodeSseComment, encodeSseEvent } from '../lib/codec/sse.ts'
import { SSE_HEADERS, type Exchange, type ListenerSession, type Sink } from './http-exchange.ts'
import { requestsOf, responseIds } from './http-ids.ts'
import { InboundQueue } from './inbound-queue.ts'

/**
 * One legacy HTTP+SSE session (MCP 2024-11-05): a GET stream that carries everything the server
 * sends, and POSTs to the endpoint it names. The stream cannot be resumed, so a client that stops
 * reading past the high-water mark loses its session.
 */
export class LegacySession implements Transport, ListenerSession {
  readonly kind = 'sse'
  /** The client's IP address (for the bridge's per-client limit). */
  remoteAddress: string | undefined
  /** The principal that opened the session (`principalKey`): only its POSTs may use it. */
  principalKey = ''
  /** Set when the session is shared between instances (its id is then the server's session id too). */
  shared: SharedSession | undefined
  /** When its cluster record was last refreshed (listener clock). */
  sharedAt = 0
  readonly #inbound = new InboundQueue()
  readonly inbound: Observable<Inbound>
  #sink: Sink | undefined
  #isEnded = false
  /** Requests the client sent that have no answer yet (created on the first one). */
  #inFlight: Set<RequestId> | undefined

  constructor(readonly id: string, public lastSeen: number, readonly onEnd: (session: LegacySession) => void) {
    this.inbound = this.#inbound.observe()
  }

  attach(exchange: Exchange, endpoint: string, highWaterMark: number): void {
    const sink = exchange.stream(200, SSE_HEADERS, highWaterMark)
    this.#sink = sink
    // MCP 2024-11-05: the first event names the URI the client POSTs its messages to.
    sink.write(encodeSseEvent({ event: 'endpoint', data: endpoint }))
    exchange.onClose(() => this.end())
  }

  /** Hands a POST's body to the connection, with its sender and the POST itself (see HttpSession.receive). */
  receiveFrame(body: Uint8Array, principal?: Principal, requestInfo?: RequestInfo): void {
    this.receiveDecoded(decodeJsonFrame(body, Infinity), principal, requestInfo)
  }

  /** The same, for a body the listener decoded already (to check it first). */
  receiveDecoded(decoded: Inbound, principal?: Principal, requestInfo?: RequestInfo): void {
    if (decoded.type === 'message') {
      const { ids, cancelled } = requestsOf(decoded.message)
      if (ids.length > 0) { this.#inFlight ??= new Set(); for (const id of ids) this.#inFlight.add(id) }
      for (const id of cancelled) this.#inFlight?.delete(id)
    }
    if (decoded.type === 'message') {
      // The decoded item is this POST's own: what came with it goes on it, no copy.
      if (principal !== undefined) decoded.principal = principal
      decoded.requestInfo = requestInfo
      if (this.shared !== undefined) decoded.session = this.shared
    }
    this.#inbound.push(decoded)
  }

  hasRequestInFlight(): boolean {
    return this.#inFlight !== undefined && this.#inFlight.size > 0
  }

  keepAlive(): void {
    this.#sink?.write(encodeSseComment('keep-alive'))
  }

  send(payload: JsonRpcPayload): void {
    if (this.#isEnded) throw new TransportError('The SSE session has ended')
    if (this.#inFlight !== undefined) for (const id of responseIds(payload)) this.#inFlight.delete(id)
    this.#sink?.write(`event: message\ndata: ${JSON.stringify(payload)}\n\n`)
  }

  async close(): Promise<void> { this.end() }

  end(): void {
    if (this.#isEnded) return
    this.#isEnded = true
    const sink = this.#sink
    this.#sink = undefined
    sink?.end()
    this.#inbound.end()
    this.onEnd(this)
  }
}
