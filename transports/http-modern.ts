import type { Reply } from '../lib/transport.ts'
import type { JsonRpcMessage } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import { encodeSseComment, encodeSseEvent } from '../lib/codec/sse.ts'
import { JSON_HEADERS, SSE_HEADERS, type Exchange, type Sink } from './http-exchange.ts'

/**
 * The reply of one modern-era request over Streamable HTTP (MCP 2026-07-28): a POST that carries
 * one request and gets its answer, with no session. The server writes to it through the
 * {@link Reply} contract:
 *
 * - the answer is one JSON body when it comes first, with the status its error code calls for
 *   (-32601: 404; -32020, -32021, -32022, -32600, -32700: 400); a notification that comes first
 *   (progress, a log message, a listen stream's acknowledgement) opens an SSE stream instead, which
 *   carries the notifications and ends with the answer;
 * - a client that closes the response early ends the reply (`closed` resolves before the answer),
 *   which cancels the request: closing the stream is the cancellation signal of this revision.
 */
export class ModernReply implements Reply {
  #sink: Sink | undefined
  #isDone = false
  #resolveClosed!: () => void
  /** Resolves when the exchange is over (answered, or the client went away). */
  readonly closed = new Promise<void>(resolve => { this.#resolveClosed = resolve })

  constructor(
    readonly exchange: Exchange,
    readonly highWaterMark: number,
    /** Answer with one JSON body always (the listener's `jsonResponse`): notifications are dropped. */
    readonly isJsonOnly = false,
  ) {
    exchange.onClose(() => this.#end())
  }

  get isClosed(): boolean { return this.#isDone }

  /** True while an SSE stream is open (a listen stream, or a request that streamed notifications). */
  get isStreaming(): boolean { return this.#sink !== undefined && !this.#isDone }

  send(payload: JsonRpcMessage): void {
    if (this.#isDone) throw new TransportError('The HTTP exchange is over')
    if (!isJsonObject(payload)) throw new TransportError('A modern-era exchange carries single messages')
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

  /** Ends the exchange: the listener is closing. Before any answer, the client is told the server is shutting down. */
  close(): void {
    if (this.#isDone) return
    if (this.#sink === undefined) this.exchange.reply(503, JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'The server is shutting down' } }))
    this.#end()
  }

  #end(): void {
    if (this.#isDone) return
    this.#isDone = true
    this.#sink?.end()
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
