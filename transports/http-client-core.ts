import { Subject } from '../lib/rx.ts'
import { bareRequestInfo, type Inbound, type RequestInfo } from '../lib/transport.ts'
import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, TransportError } from '../lib/jsonrpc/errors.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { sameOriginRedirects } from './same-origin-redirects.ts'
import { defaultFetch } from './node-fetch.ts'
import type { HttpClientOptions } from './http-client-options.ts'
import type { SseEvent } from '../lib/codec/sse.ts'

/**
 * The state of one HTTP client transport, which each of its parts reads and writes: the POST
 * (`http-client-post.ts`, `http-client-modern.ts`), the resumption of a POST's SSE answer
 * (`http-client-resume.ts`), the standalone GET stream (`http-client-get.ts`) and the legacy
 * HTTP+SSE client (`http-client-legacy.ts`). Internal: the transport users get is `HttpClient`
 * of `http-client.ts`, which holds one of these.
 */
export class HttpClientCore {
  /** Every decoded frame, for the connection (the transport's `inbound`). */
  readonly incoming = new Subject<Inbound>()
  readonly options: HttpClientOptions
  readonly fetch: typeof fetch
  readonly url: URL
  /** Where the legacy fallback of `httpClient` opens its SSE stream (default: `url`). */
  readonly sseUrl: URL | undefined
  readonly maxMessageSize: number
  /** Aborts every request in flight when the transport closes. */
  readonly abort = new AbortController()
  /** Which transport is in use: decided by the first request for `httpClient`. */
  mode: 'streamable-http' | 'sse' | undefined
  sessionId: string | undefined
  /** The session's negotiated version, as the last message that carried one told it (`SendOptions.protocolVersion`). */
  protocolVersion: string | undefined
  /** Legacy mode: where to POST, once the endpoint event arrived. */
  endpoint: Promise<URL> | undefined
  isClosed = false
  isStandaloneOpen = false
  /** The initialize request as first sent, replayed when the server forgets the session. */
  initializePayload: JsonRpcPayload | undefined
  /** Modern requests in flight, by id: aborting one closes its response stream, which cancels it. */
  readonly modernInFlight = new Map<RequestId, AbortController>()
  /**
   * Every POST in flight, each with a signal of its own: closing aborts them all through one
   * listener. (Fetch leaves its abort listener on the signal it is given until the request is
   * collected, and many POSTs on one shared signal would pile them up.)
   */
  readonly posts = new Set<AbortController>()

  constructor(url: URL, options: HttpClientOptions, mode: 'streamable-http' | 'sse' | undefined, sseUrl?: URL) {
    this.url = url
    this.sseUrl = sseUrl
    this.options = options
    this.mode = mode
    // Redirects are followed within the server's origin only: the session id and headers stay with it.
    // Without a fetch of the user's: node:http on Node (a fraction of undici's cost per exchange), the global fetch elsewhere.
    this.fetch = sameOriginRedirects(options.fetch ?? defaultFetch())
    this.maxMessageSize = options.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE
    this.abort.signal.addEventListener('abort', () => { for (const post of this.posts) post.abort() }, { once: true })
  }

  /** A signal for one POST, aborted when the transport closes; `release` when the POST is over. */
  postSignal(): { controller: AbortController; release: () => void } {
    const controller = new AbortController()
    if (this.abort.signal.aborted) controller.abort()
    this.posts.add(controller)
    return { controller, release: () => { this.posts.delete(controller) } }
  }

  /**
   * The headers of a request in the session: the configured ones, then the message's own
   * (`SendOptions.headers`), then `extra`, the session id and protocol version once known. A plain
   * record with lower-case names, so a later one replaces an earlier one of any spelling (a
   * Headers object per request costs more than the rest of building it).
   */
  headers(extra: Record<string, string>, message?: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = {}
    if (this.options.headers !== undefined) lowerInto(headers, this.options.headers)
    if (message !== undefined) lowerInto(headers, message)
    lowerInto(headers, extra)
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion
    return headers
  }

  /**
   * Decodes one frame and hands it to the connection, with the transport's word on it
   * (`requestInfo`: which transport carried it); returns what was decoded.
   */
  emit(data: string | Uint8Array, relatedRequestId?: RequestId): Inbound | undefined {
    if (this.isClosed) return undefined
    const item = decodeJsonFrame(data, this.maxMessageSize, this.options.structureLimits)
    // Set on the item the decoder just made: no object per frame.
    if (item.type === 'message') {
      item.requestInfo = this.requestInfo
      if (relatedRequestId !== undefined) item.relatedRequestId = relatedRequestId
    }
    this.incoming.next(item)
    return item
  }

  /** What the transport tells of each frame it hands on: its kind, once known (see `Inbound`). */
  get requestInfo(): RequestInfo | undefined {
    return this.mode === 'streamable-http' ? STREAMABLE_HTTP_INFO : this.mode === 'sse' ? SSE_INFO : undefined
  }

  /** Ends the transport with `error` (as a TransportError unless it is one, or a ConnectionClosedError). */
  fail(error: unknown): void {
    if (this.isClosed) return
    this.isClosed = true
    this.abort.abort()
    this.incoming.error(error instanceof ConnectionClosedError || error instanceof TransportError ? error : new TransportError(error instanceof Error ? error.message : String(error), { cause: error }))
  }
}

/** The `requestInfo` of every frame of a Streamable HTTP client transport: the transport's name, nothing per request. */
const STREAMABLE_HTTP_INFO = bareRequestInfo('streamable-http')
/** The same for the legacy HTTP+SSE client. */
const SSE_INFO = bareRequestInfo('sse')

/** How much of an error answer's body is read, for the error message. */
export const ERROR_BODY_LIMIT = 64 * 1024

/** Copies `from` into `into` with lower-case names. */
export function lowerInto(into: Record<string, string>, from: Record<string, string>): void {
  for (const name of Object.keys(from)) into[name.toLowerCase()] = from[name]!
}

/** The message of what a fetch threw. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The ids of the requests in an outgoing message or batch. */
export function requestIdsOf(payload: JsonRpcPayload): RequestId[] {
  const ids: RequestId[] = []
  for (const message of Array.isArray(payload) ? payload : [payload]) {
    if ('method' in message && 'id' in message) ids.push(message.id)
  }
  return ids
}

/**
 * Hands on the JSON-RPC message an SSE event carries (a priming event carries no data, and an
 * event of another type is not MCP's) and crosses the requests it answers off `waiting`. `related`:
 * the one request whose POST's stream carried it, so the connection ties the server's requests
 * made while serving it to it (see `Envelope.relatedRequestId`).
 */
export function deliverEvent(core: HttpClientCore, event: SseEvent, waiting?: Set<RequestId>, related?: RequestId): void {
  if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return
  const item = core.emit(event.data, related)
  if (waiting === undefined || waiting.size === 0 || item?.type !== 'message') return
  if (Array.isArray(item.message)) for (const message of item.message) crossOff(message, waiting)
  else crossOff(item.message, waiting)
}

/** Removes a response's id from `waiting`; a request or notification answers nothing. */
function crossOff(message: unknown, waiting: Set<RequestId>): void {
  if (message === null || typeof message !== 'object' || 'method' in message) return
  const id = (message as { id?: unknown }).id
  if (typeof id === 'string' || typeof id === 'number') waiting.delete(id)
}
