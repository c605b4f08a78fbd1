import { Observable, type Subscriber } from '../lib/rx.ts'
import type { Inbound, SendOptions, Transport } from '../lib/transport.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import { encodeSseComment, encodeSseEvent } from '../lib/codec/sse.ts'
import { JSON_HEADERS, SSE_HEADERS, type Exchange, type Sink } from './http-exchange.ts'
import { requestInfo } from './request-info.ts'

/**
 * One modern-era request over Streamable HTTP (MCP 2026-07-28): a POST that carries one request
 * and gets its answer, with no session. A Transport that lives as long as the exchange:
 *
 * - `inbound` gives the request, then stays open until the answer is written or the client goes
 *   away; a client that closes the response early ends it, so the connection cancels the request
 *   (closing the stream is the cancellation signal of this revision);
 * - the answer is one JSON body when it comes first, with the status its error code calls for
 *   (-32601: 404; -32020, -32021, -32022, -32600, -32700: 400); a notification that comes first (progress,
 *   a log message, a listen stream's acknowledgement) opens an SSE stream instead, which carries
 *   the notifications and ends with the answer.
 */
export class ModernExchange implements Transport {
  readonly kind = 'streamable-http'
  readonly isStateless = true
  readonly era = 'modern'
  readonly inbound: Observable<Inbound>
  readonly remoteAddress: string | undefined
  #reader: Subscriber<Inbound> | undefined
  #sink: Sink | undefined
  #isDone = false
  #resolveClosed!: () => void
  /** Resolves when the exchange is over (answered, or the client went away). */
  readonly closed = new Promise<void>(resolve => { this.#resolveClosed = resolve })

  constructor(
    readonly exchange: Exchange,
    message: unknown,
    readonly highWaterMark: number,
    /** Answer with one JSON body always (the listener's `jsonResponse`): notifications are dropped. */
    readonly isJsonOnly = false,
    /** The client's address (the listener's `clientAddress` behind a proxy; default the socket's). */
    remoteAddress: string | undefined = exchange.remoteAddress,
  ) {
    this.remoteAddress = remoteAddress
    this.inbound = new Observable<Inbound>(subscriber => {
      if (this.#isDone) return subscriber.complete()
      this.#reader = subscriber
      // The POST itself goes with its request: its headers (made when read) and the client's address.
      subscriber.next({ type: 'message', message, principal: exchange.principal, requestInfo: requestInfo(this.kind, exchange.headerList(), remoteAddress) })
      return () => { if (this.#reader === subscriber) this.#reader = undefined }
    })
    exchange.onClose(() => this.#end())
  }

  /** True while an SSE stream is open (a listen stream, or a request that streamed notifications). */
  get isStreaming(): boolean { return this.#sink !== undefined && !this.#isDone }

  send(payload: JsonRpcPayload, _options?: SendOptions): void {
    if (this.#isDone) throw new TransportError('The HTTP exchange is over')
    if (Array.isArray(payload) || !isJsonObject(payload)) throw new TransportError('A modern-era exchange carries single messages')
    const isResponse = 'id' in payload && !('method' in payload)
    if (!isResponse && 'id' in payload) throw new TransportError('MCP 2026-07-28 servers do not send requests on a response stream')
    if (!isResponse && this.isJsonOnly) return
    const text = JSON.stringify(payload)
    if (isResponse && this.#sink === undefined) {
      const code = isJsonObject(payload.error) ? payload.error.code : undefined
      this.exchange.reply(statusOf(code), JSON_HEADERS, text)
      return this.#end()
    }
    this.#sink ??= this.exchange.stream(200, { ...SSE_HEADERS, 'x-accel-buffering': 'no' }, this.highWaterMark)
    this.#sink.write(encodeSseEvent({ event: 'message', data: text }))
    if (isResponse) this.#end()
  }

  /** A comment line on an open stream, so that idle proxies keep a long listen stream up. */
  keepAlive(): void {
    if (this.isStreaming) this.#sink!.write(KEEP_ALIVE)
  }

  async close(): Promise<void> {
    if (this.#isDone) return
    // Closed before any answer (the server is shutting down): nothing more will come.
    if (this.#sink === undefined) this.exchange.reply(503, JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'The server is shutting down' } }))
    this.#end()
  }

  #end(): void {
    if (this.#isDone) return
    this.#isDone = true
    this.#sink?.end()
    const reader = this.#reader
    this.#reader = undefined
    reader?.complete()
    this.#resolveClosed()
  }
}

/** The HTTP status of an answer that comes alone: the spec ties a few JSON-RPC errors to one. */
function statusOf(code: unknown): number {
  switch (code) {
    case -32601: return 404
    case -32020: case -32021: case -32022: case -32600: case -32700: return 400
    default: return 200
  }
}

const KEEP_ALIVE = encodeSseComment('keep-alive')
