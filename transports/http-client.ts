import { Observable, Subject, asyncScheduler, type SchedulerLike, type Subscription } from '../lib/rx.ts'
import type { HeaderSource, Inbound, Transport } from '../lib/transport.ts'
import { sameOriginRedirects } from './same-origin-redirects.ts'
import type { JsonObject, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, FrameTooLargeError, HttpStatusError, ResponseLostError, TransportError } from '../lib/jsonrpc/errors.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'
import { createSseParser, type SseEvent } from '../lib/codec/sse.ts'
import { UnauthorizedError } from '../lib/unauthorized-error.ts'
import { ANONYMOUS_CONTEXT, credentialContext, isAuthorizationContextSource, type AuthorizationContext } from '../lib/authorization-context.ts'
import { MetaKey, NAMED_METHODS, encodeHeaderValue, mcpNameOf, requestMeta } from '../lib/schema/modern.ts'

/** Options of the HTTP client transports. */
export interface HttpClientOptions {
  /** Extra headers on every request (an Authorization header, say). */
  headers?: Record<string, string>
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch
  /**
   * Reconnection of dropped SSE streams: first delay, cap, and attempts in a row (defaults 1 s, 30 s,
   * 5). A `retry` field the server sent on the stream wins: the client waits exactly that many
   * milliseconds before it reconnects (MCP Streamable HTTP).
   */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number; maxRetries?: number }
  /** Where the reconnection waits run (default RxJS's `asyncScheduler`): a virtual one in tests. */
  scheduler?: SchedulerLike
  /**
   * Largest incoming message in bytes (default 4 MiB). It bounds a JSON body and one SSE event too:
   * a server that sends more (an event that never ends, say) fails the request it answers with a
   * TransportError whose cause is a FrameTooLargeError, and its stream is cancelled.
   */
  maxMessageSize?: number
  /**
   * Bounds on each incoming message's nesting and members, in a JSON body or an SSE event
   * (default `STRUCTURE_DEFAULTS`: 128 levels, 100,000 members), checked before it is parsed: a
   * response past them fails the request it answers at once with `StructureLimitError`, and the
   * connection serves on.
   */
  structureLimits?: StructureLimits
  /** Streamable HTTP: open the GET stream for server-initiated messages after initialize (default true). */
  openStandaloneStream?: boolean
  /**
   * Streamable HTTP: when the server answers 404 for the session (it expired or restarted), run
   * initialize again with the same parameters and retry the request (default true). Subscriptions
   * and other session state of the old session are gone. With false, the connection closes.
   */
  reinitializeOnExpiry?: boolean
}

/** DEFAULTS of {@link HttpClientOptions}. */
export const HTTP_CLIENT_DEFAULTS = { initialDelayMs: 1000, maxDelayMs: 30_000, maxRetries: 5 } as const

export type { HeaderSource }

/** A client transport over HTTP that knows the session it is in. */
export interface HttpClientTransport extends Transport {
  /** The session id the server gave, once initialized (Streamable HTTP). */
  readonly sessionId: string | undefined
  /** Which transport is in use: decided by the first request for {@link httpClient}. */
  readonly mode: 'streamable-http' | 'sse' | undefined
  /** Tells the transport the negotiated version, for the MCP-Protocol-Version header. */
  setProtocolVersion(version: string): void
  /**
   * Installs the source of per-request extra headers (the client calls it with the function that
   * computes the `Mcp-Param-*` headers of its tools/call requests). Replaces any earlier one.
   */
  setHeaderSource(source: HeaderSource): void
}

/**
 * The Streamable HTTP client transport (MCP 2025-03-26 onward).
 *
 * Each message is POSTed with `Accept: application/json, text/event-stream`; a JSON answer is read
 * whole, an SSE answer event by event. The session id from initialize goes on every later request,
 * with MCP-Protocol-Version once known. After initialize it opens the GET stream when the server
 * offers one. A dropped SSE stream is resumed with `Last-Event-ID`, waiting the server's `retry`
 * or an exponential backoff with a cap. `close()` DELETEs the session.
 *
 * A modern request (MCP 2026-07-28: its `_meta` names a protocol version) is one POST of its own,
 * outside any session: no Mcp-Session-Id (one the server sends back is ignored), no GET stream, no
 * resumption (a response stream that ends before its response fails the request with
 * `TransportError`). Its standard headers are read from the message itself: `MCP-Protocol-Version`
 * (the `_meta` version), `Mcp-Method`, and `Mcp-Name` (the tool or prompt name, the resource URI;
 * base64-sentinel encoded when not plain ASCII); the {@link HeaderSource} adds `Mcp-Param-*`.
 * A `notifications/cancelled` for a modern request in flight is not POSTed: closing that
 * request's response stream is the cancellation on HTTP.
 *
 * A 401, or a 403 `insufficient_scope`, fails the request with {@link UnauthorizedError} (a
 * TransportError carrying the status, the parsed `WWW-Authenticate` challenge and the resource
 * metadata URL it names); pass `oauthFetch` of `rxmcp/auth/client` as `fetch` to authorize instead.
 *
 * @example
 * const client = await connect(streamableHttpClient('http://127.0.0.1:3000/mcp'), { name: 'me', version: '1' })
 */
export function streamableHttpClient(url: string | URL, options: HttpClientOptions = {}): HttpClientTransport {
  return new HttpClient(new URL(url), options, 'streamable-http')
}

/** The legacy HTTP+SSE client transport (MCP 2024-11-05): GET the SSE stream, POST to the endpoint it names. */
export function sseClient(url: string | URL, options: HttpClientOptions = {}): HttpClientTransport {
  return new HttpClient(new URL(url), options, 'sse')
}

/**
 * Streamable HTTP first, legacy HTTP+SSE when the server refuses the initialize POST with 400, 404
 * or 405, as the MCP backwards-compatibility section describes. For the legacy fallback, `sseUrl`
 * (default: the same URL) is where the SSE stream is opened.
 */
export function httpClient(url: string | URL, options: HttpClientOptions & { sseUrl?: string | URL } = {}): HttpClientTransport {
  return new HttpClient(new URL(url), options, undefined, options.sseUrl === undefined ? undefined : new URL(options.sseUrl))
}

class HttpClient implements HttpClientTransport {
  readonly kind = 'http'
  readonly inbound: Observable<Inbound>
  readonly #incoming = new Subject<Inbound>()
  readonly #options: HttpClientOptions
  readonly #fetch: typeof fetch
  readonly #url: URL
  readonly #sseUrl: URL | undefined
  readonly #maxMessageSize: number
  /** Aborts every request in flight when the transport closes. */
  readonly #abort = new AbortController()
  #mode: 'streamable-http' | 'sse' | undefined
  #sessionId: string | undefined
  #protocolVersion: string | undefined
  /** Legacy mode: where to POST, once the endpoint event arrived. */
  #endpoint: Promise<URL> | undefined
  #isClosed = false
  #isStandaloneOpen = false
  /** The initialize request as first sent, replayed when the server forgets the session. */
  #initializePayload: JsonRpcPayload | undefined
  /** Modern requests in flight, by id: aborting one closes its response stream, which cancels it. */
  readonly #modernInFlight = new Map<RequestId, AbortController>()
  /**
   * Every POST in flight, each with a signal of its own: closing aborts them all through one
   * listener. (Fetch leaves its abort listener on the signal it is given until the request is
   * collected, and many POSTs on one shared signal would pile them up.)
   */
  readonly #posts = new Set<AbortController>()
  /** Extra headers per outgoing request (see {@link HeaderSource}). */
  #headerSource: HeaderSource | undefined

  constructor(url: URL, options: HttpClientOptions, mode: 'streamable-http' | 'sse' | undefined, sseUrl?: URL) {
    this.#url = url
    this.#sseUrl = sseUrl
    this.#options = options
    this.#mode = mode
    // Called as a plain function: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    // Redirects are followed within the server's origin only: the session id and headers stay with it.
    this.#fetch = sameOriginRedirects(options.fetch ?? ((input, init) => globalThis.fetch(input, init)))
    this.#maxMessageSize = options.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE
    this.inbound = this.#incoming.asObservable()
    this.#abort.signal.addEventListener('abort', () => { for (const post of this.#posts) post.abort() }, { once: true })
    if (mode === 'sse') this.#endpoint = this.#openLegacy(url)
  }

  /** A signal for one POST, aborted when the transport closes; `release` when the POST is over. */
  #postSignal(): { controller: AbortController; release: () => void } {
    const controller = new AbortController()
    if (this.#abort.signal.aborted) controller.abort()
    this.#posts.add(controller)
    return { controller, release: () => { this.#posts.delete(controller) } }
  }

  get sessionId(): string | undefined { return this.#sessionId }

  /**
   * The authorization context of the next request (MCP 2026-07-28 caching: the client keeps a
   * `private` result for that context alone): the `fetch`'s own name for it when it gives one (an
   * `oauthFetch` names the token it holds for this server), else the Authorization header of
   * `headers`. Null (unknown: nothing private is cached) for a `fetch` of the application's that
   * names none, since it may add a credential of its own.
   */
  async authorizationContext(): Promise<AuthorizationContext> {
    const fetchFn = this.#options.fetch
    const configured = await credentialContext(new Headers(this.#options.headers).get('authorization'))
    if (fetchFn === undefined) return configured
    if (!isAuthorizationContextSource(fetchFn)) return null
    const named = await fetchFn.authorizationContext(this.#url)
    // The fetch holds no credential for this server yet: the configured header is what goes out.
    return named === ANONYMOUS_CONTEXT ? configured : named
  }
  get mode(): 'streamable-http' | 'sse' | undefined { return this.#mode }

  setProtocolVersion(version: string): void { this.#protocolVersion = version }

  setHeaderSource(source: HeaderSource): void { this.#headerSource = source }

  send(payload: JsonRpcPayload): Promise<void> {
    if (this.#isClosed) return Promise.reject(new TransportError('The HTTP transport is closed'))
    const cancelled = cancelledRequestOf(payload)
    const inFlight = cancelled === undefined ? undefined : this.#modernInFlight.get(cancelled)
    if (inFlight !== undefined) {
      // MCP 2026-07-28 Streamable HTTP: closing the response stream is the cancellation, no notification.
      inFlight.abort()
      return Promise.resolve()
    }
    if (this.#mode !== 'sse') {
      const modern = modernRequestOf(payload)
      if (modern !== undefined) return this.#postModern(payload, modern)
    }
    return this.#mode === 'sse' ? this.#postLegacy(payload) : this.#post(payload)
  }

  /**
   * One modern request as its own POST, with the request metadata headers and no session. Settles
   * once its answer was read; rejects with TransportError when the POST fails or its response
   * stream ends before the response (a modern stream is never resumed).
   */
  async #postModern(payload: JsonRpcPayload, request: ModernRequest): Promise<void> {
    const { controller, release } = this.#postSignal()
    this.#modernInFlight.set(request.id, controller)
    try {
      const headers = new Headers({
        ...this.#options.headers,
        ...this.#headerSource?.(request),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': request.version,
        'mcp-method': request.method,
      })
      const name = NAMED_METHODS.has(request.method) ? mcpNameOf(request.method, request.params) : undefined
      if (name !== undefined) headers.set('mcp-name', encodeHeaderValue(name))
      let response: Response
      try {
        response = await this.#fetch(this.#url, { method: 'POST', headers, body: JSON.stringify(payload), signal: controller.signal })
      } catch (error) {
        if (this.#isClosed || controller.signal.aborted) return
        throw new TransportError(`POST ${this.#url} failed: ${messageOf(error)}`, { cause: error })
      }
      if (response.ok && this.#mode === undefined) this.#mode = 'streamable-http'
      if (!response.ok) return await this.#refused(response, payload)
      const contentType = response.headers.get('content-type') ?? ''
      if (contentType.includes('text/event-stream')) {
        const waiting = new Set([request.id])
        try {
          await this.#consume(response, event => {
            if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return
            const item = this.#emit(event.data)
            if (item?.type === 'message') for (const id of responseIdsOf(item.message)) waiting.delete(id)
          })
        } catch (error) {
          if (error instanceof FrameTooLargeError) throw this.#tooLarge(error, `The response stream of POST ${this.#url}`)
          if (this.#isClosed || controller.signal.aborted) return
          throw new ResponseLostError(`The response stream of ${request.method} broke: ${messageOf(error)}`, { cause: error })
        }
        // MCP 2026-07-28: no resumption; a stream that ended early lost its request.
        if (waiting.size > 0 && !this.#isClosed && !controller.signal.aborted) {
          throw new ResponseLostError(`The response stream of ${request.method} ended before its response`)
        }
      } else if (contentType.includes('application/json')) {
        this.#emit(await this.#readBody(response, this.#maxMessageSize).catch(error => { throw this.#tooLarge(error, `POST ${this.#url}`) }))
      } else {
        void response.body?.cancel()
      }
    } catch (error) {
      // Our own cancellation ends the POST quietly: the connection stopped waiting for it already.
      if (controller.signal.aborted && !this.#isClosed) return
      throw error
    } finally {
      this.#modernInFlight.delete(request.id)
      release()
    }
  }

  /**
   * A POST answered with an error status. A 401 (or 403 `insufficient_scope`) fails the send with
   * an UnauthorizedError carrying the challenge, whatever the body; a JSON-RPC error body answers
   * the request (a modern server's -32022, -32020, -32601; a legacy one's session errors), handed
   * on so the caller sees the server's error; anything else fails the send with an HttpStatusError
   * naming the status.
   */
  async #refused(response: Response, payload: JsonRpcPayload): Promise<void> {
    const unauthorized = UnauthorizedError.fromResponse(response, this.#url)
    if (unauthorized !== undefined) { void response.body?.cancel(); throw unauthorized }
    const text = await this.#readBody(response, ERROR_BODY_LIMIT).then(bytes => new TextDecoder().decode(bytes), () => '')
    if (response.headers.get('content-type')?.includes('application/json') && text.includes('"jsonrpc"')) return this.#emitErrorFor(payload, text)
    throw new HttpStatusError(`POST ${this.#url} answered ${response.status} ${response.statusText}${text ? `: ${text.slice(0, 200)}` : ''}`, response.status)
  }

  #headers(extra: Record<string, string>): Headers {
    const headers = new Headers({ ...this.#options.headers, ...extra })
    if (this.#sessionId !== undefined) headers.set('mcp-session-id', this.#sessionId)
    if (this.#protocolVersion !== undefined) headers.set('mcp-protocol-version', this.#protocolVersion)
    return headers
  }

  /** Decodes one frame and hands it to the connection; returns what was decoded. */
  #emit(data: string | Uint8Array): Inbound | undefined {
    if (this.#isClosed) return undefined
    const item = decodeJsonFrame(data, this.#maxMessageSize, this.#options.structureLimits)
    this.#incoming.next(item)
    return item
  }

  #fail(error: unknown): void {
    if (this.#isClosed) return
    this.#isClosed = true
    this.#abort.abort()
    this.#incoming.error(error instanceof ConnectionClosedError || error instanceof TransportError ? error : new TransportError(error instanceof Error ? error.message : String(error), { cause: error }))
  }

  // ---- Streamable HTTP ----

  /** One POST, with a signal of its own for as long as it lasts (see #posts). */
  async #post(payload: JsonRpcPayload, isRetry = false): Promise<void> {
    const { controller, release } = this.#postSignal()
    try {
      return await this.#postOnce(payload, isRetry, controller.signal)
    } finally {
      release()
    }
  }

  async #postOnce(payload: JsonRpcPayload, isRetry: boolean, signal: AbortSignal): Promise<void> {
    const isInitialize = !Array.isArray(payload) && 'method' in payload && payload.method === 'initialize'
    if (isInitialize) this.#initializePayload = payload
    let response: Response
    try {
      response = await this.#fetch(this.#url, {
        method: 'POST',
        headers: this.#headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
        body: JSON.stringify(payload),
        signal,
      })
    } catch (error) {
      if (this.#isClosed) return
      throw new TransportError(`POST ${this.#url} failed: ${messageOf(error)}`, { cause: error })
    }
    if (this.#mode === undefined && isInitialize && (response.status === 400 || response.status === 404 || response.status === 405)) {
      // MCP backwards compatibility: an old server refuses the POST; talk HTTP+SSE to it instead.
      void response.body?.cancel()
      this.#mode = 'sse'
      this.#endpoint = this.#openLegacy(this.#sseUrl ?? this.#url)
      return this.#postLegacy(payload)
    }
    // A refused request that is not initialize says nothing of the transport (the 4xx of a probe).
    if (this.#mode === undefined && (response.ok || isInitialize)) this.#mode = 'streamable-http'
    const sessionId = response.headers.get('mcp-session-id')
    if (sessionId !== null && this.#sessionId === undefined) this.#sessionId = sessionId
    if (response.status === 202) { void response.body?.cancel(); return this.#afterNotification(payload) }
    if (response.status === 404 && this.#sessionId !== undefined) {
      void response.body?.cancel()
      if (isRetry || this.#options.reinitializeOnExpiry === false || this.#initializePayload === undefined) {
        return this.#fail(new ConnectionClosedError('The server no longer knows this session (404); connect again'))
      }
      await this.#reinitialize()
      return this.#post(payload, true)
    }
    if (!response.ok) return await this.#refused(response, payload)
    const contentType = response.headers.get('content-type') ?? ''
    if (contentType.includes('text/event-stream')) {
      // Awaited, so a stream that fails (an oversized event) fails the send, and so the requests it carries.
      await this.#readSse(response, requestIdsOf(payload))
    } else if (contentType.includes('application/json')) {
      this.#emit(await this.#readBody(response, this.#maxMessageSize).catch(error => { throw this.#tooLarge(error, `POST ${this.#url}`) }))
    } else {
      void response.body?.cancel()
    }
  }

  /** Starts a new session with the first initialize's parameters; its answer stays here. */
  async #reinitialize(): Promise<void> {
    this.#sessionId = undefined
    const response = await this.#fetch(this.#url, {
      method: 'POST',
      headers: this.#headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
      body: JSON.stringify(this.#initializePayload),
      signal: this.#abort.signal,
    })
    const sessionId = response.headers.get('mcp-session-id')
    if (!response.ok || sessionId === null) {
      void response.body?.cancel()
      throw new ConnectionClosedError(`The session expired and initialize failed again (${response.status})`)
    }
    this.#sessionId = sessionId
    // The connection already has its initialize answer: this one is read and dropped.
    await this.#readBody(response, this.#maxMessageSize)
    const initialized = await this.#fetch(this.#url, {
      method: 'POST',
      headers: this.#headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      signal: this.#abort.signal,
    })
    void initialized.body?.cancel()
  }

  #emitErrorFor(payload: JsonRpcPayload, text: string): void {
    try {
      const body = JSON.parse(text)
      const ids = requestIdsOf(payload)
      // The server answered with id null; pin it to the request so its caller is not left waiting.
      if (body?.id === null && ids.length === 1) body.id = ids[0]
      this.#incoming.next({ type: 'message', message: body })
    } catch { /* not JSON after all */ }
  }

  #afterNotification(payload: JsonRpcPayload): void {
    const isInitialized = !Array.isArray(payload) && 'method' in payload && payload.method === 'notifications/initialized'
    if (isInitialized && this.#options.openStandaloneStream !== false && !this.#isStandaloneOpen) {
      this.#isStandaloneOpen = true
      void this.#openStandalone(undefined, 0)
    }
  }

  /** Reads an SSE answer; resumes it with Last-Event-ID if it drops before every request is answered. */
  async #readSse(response: Response, pending: RequestId[], attempt = 0, resumeFrom?: string): Promise<void> {
    const waiting = new Set(pending)
    // A resume that failed keeps the place it tried to resume from.
    let lastEventId = resumeFrom
    let retry: number | undefined
    try {
      await this.#consume(response, event => {
        if (event.id !== undefined) lastEventId = event.id
        if (event.retry !== undefined) retry = event.retry
        if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return
        const item = this.#emit(event.data)
        if (item?.type === 'message') for (const id of responseIdsOf(item.message)) waiting.delete(id)
      })
    } catch (error) {
      // Resuming would replay the same oversized event: the requests still owed fail instead.
      if (error instanceof FrameTooLargeError) throw this.#tooLarge(error, `The response stream of POST ${this.#url}`)
      // Otherwise a dropped connection: resumed below if anything is still owed.
    }
    if (this.#isClosed || waiting.size === 0 || lastEventId === undefined) return
    const maxRetries = this.#options.reconnect?.maxRetries ?? HTTP_CLIENT_DEFAULTS.maxRetries
    if (attempt >= maxRetries) return this.#fail(new ConnectionClosedError('The response stream dropped and could not be resumed'))
    await this.#sleep(this.#delay(attempt, retry))
    const resumed = await this.#getStream(lastEventId)
    if (resumed !== undefined) return this.#readSse(resumed, [...waiting], attempt + 1, lastEventId)
    return this.#readSse(new Response(null), [...waiting], attempt + 1, lastEventId)
  }

  /** The GET stream for server-initiated messages, kept open across drops. */
  async #openStandalone(lastEventId: string | undefined, attempt: number): Promise<void> {
    let retry: number | undefined
    let isAnyEvent = false
    const response = await this.#getStream(lastEventId)
    if (this.#isClosed) return
    if (response === undefined) {
      // Refused or unreachable (a server restarting, a balancer between instances): tried again,
      // waiting longer each time, from the same place.
      const next = attempt + 1
      if (next > (this.#options.reconnect?.maxRetries ?? HTTP_CLIENT_DEFAULTS.maxRetries)) return
      await this.#sleep(this.#delay(next, undefined))
      return this.#openStandalone(lastEventId, next)
    }
    if (response.status === 405) return
    try {
      await this.#consume(response, event => {
        isAnyEvent = true
        if (event.id !== undefined) lastEventId = event.id
        if (event.retry !== undefined) retry = event.retry
        if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return
        this.#emit(event.data)
      })
    } catch (error) {
      // No request to fail here, and a reconnect would replay it: the server is broken, the transport ends.
      if (error instanceof FrameTooLargeError) return this.#fail(this.#tooLarge(error, `The GET stream of ${this.#url}`))
      // Otherwise dropped: reconnect below.
    }
    if (this.#isClosed) return
    const next = isAnyEvent ? 0 : attempt + 1
    if (next > (this.#options.reconnect?.maxRetries ?? HTTP_CLIENT_DEFAULTS.maxRetries)) return
    await this.#sleep(this.#delay(next, retry))
    return this.#openStandalone(lastEventId, next)
  }

  async #getStream(lastEventId: string | undefined): Promise<Response | undefined> {
    if (this.#isClosed) return undefined
    try {
      const response = await this.#fetch(this.#url, {
        method: 'GET',
        headers: this.#headers(lastEventId === undefined ? { accept: 'text/event-stream' } : { accept: 'text/event-stream', 'last-event-id': lastEventId }),
        signal: this.#abort.signal,
      })
      if (response.status === 405) return response
      if (!response.ok || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) { void response.body?.cancel(); return undefined }
      return response
    } catch {
      return undefined
    }
  }

  /**
   * Feeds an SSE body to `onEvent`. An event over the message size limit cancels the body and
   * throws FrameTooLargeError; a dropped connection throws what fetch threw.
   */
  async #consume(response: Response, onEvent: (event: SseEvent) => void): Promise<void> {
    if (response.body === null) return
    const parser = createSseParser(onEvent, this.#maxMessageSize)
    const decoder = new TextDecoder()
    const reader = response.body.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        try {
          parser.write(decoder.decode(value, { stream: true }))
        } catch (error) {
          if (!(error instanceof RangeError)) throw error
          // Stop the server's bytes at the socket, not only here.
          await reader.cancel().catch(() => {})
          throw new FrameTooLargeError(this.#maxMessageSize, `An SSE event exceeds the limit of ${this.#maxMessageSize} bytes (maxMessageSize)`, { cause: error })
        }
      }
    } finally {
      reader.releaseLock()
    }
  }

  /** Reads a whole body, cancelling it and throwing FrameTooLargeError once it passes `limit` bytes. */
  async #readBody(response: Response, limit: number): Promise<Uint8Array> {
    if (response.body === null) return new Uint8Array(0)
    const declared = Number(response.headers.get('content-length'))
    if (declared > limit) {
      void response.body.cancel().catch(() => {})
      throw new FrameTooLargeError(limit, `A body of ${declared} bytes exceeds the limit of ${limit} bytes`)
    }
    const chunks: Uint8Array[] = []
    let size = 0
    const reader = response.body.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        size += value.byteLength
        if (size > limit) {
          await reader.cancel().catch(() => {})
          throw new FrameTooLargeError(limit, `A body exceeds the limit of ${limit} bytes`)
        }
        chunks.push(value)
      }
    } finally {
      reader.releaseLock()
    }
    if (chunks.length === 1) return chunks[0]!
    const body = new Uint8Array(size)
    let offset = 0
    for (const chunk of chunks) { body.set(chunk, offset); offset += chunk.byteLength }
    return body
  }

  /** The error a request sees when its answer was too big: a TransportError naming where, caused by the FrameTooLargeError. */
  #tooLarge(error: unknown, where: string): unknown {
    if (!(error instanceof FrameTooLargeError)) return error
    return new TransportError(`${where}: ${error.message}`, { cause: error })
  }

  #delay(attempt: number, retry: number | undefined): number {
    // The server's retry is waited exactly, up to the longest wait a timer holds (about 24.8 days):
    // a larger one would fire at once and spin the reconnects.
    if (retry !== undefined) return Math.min(retry, MAX_WAIT_MS)
    const initial = this.#options.reconnect?.initialDelayMs ?? HTTP_CLIENT_DEFAULTS.initialDelayMs
    const max = this.#options.reconnect?.maxDelayMs ?? HTTP_CLIENT_DEFAULTS.maxDelayMs
    return Math.min(max, initial * 2 ** attempt)
  }

  /** Waits `ms` on the scheduler's clock; closing the transport ends the wait at once. */
  #sleep(ms: number): Promise<void> {
    return new Promise(resolve => {
      const signal = this.#abort.signal
      // The listener goes with the sleep: one left per sleep would pile up on the client's signal.
      // Unset while `schedule` runs: a scheduler may run the work at once.
      let timer: Subscription | undefined
      const wake = () => { timer?.unsubscribe(); signal.removeEventListener('abort', wake); resolve() }
      timer = (this.#options.scheduler ?? asyncScheduler).schedule(wake, ms)
      signal.addEventListener('abort', wake, { once: true })
    })
  }

  // ---- legacy HTTP+SSE ----

  #openLegacy(url: URL): Promise<URL> {
    return new Promise<URL>((resolve, reject) => {
      void (async () => {
        let response: Response
        try {
          response = await this.#fetch(url, { method: 'GET', headers: this.#headers({ accept: 'text/event-stream' }), signal: this.#abort.signal })
        } catch (error) {
          reject(new TransportError(`GET ${url} failed: ${messageOf(error)}`, { cause: error }))
          return
        }
        if (!response.ok) {
          void response.body?.cancel()
          reject(UnauthorizedError.fromResponse(response, url, 'GET') ?? new HttpStatusError(`GET ${url} answered ${response.status}`, response.status))
          return
        }
        let hasEndpoint = false
        // Set when the stream carried an event over the size limit: the transport ends with it.
        let failure: unknown
        try {
          await this.#consume(response, event => {
            if (event.event === 'endpoint' && !hasEndpoint) {
              const endpoint = new URL(event.data, url)
              // The endpoint must be on the server we connected to, not one an attacker names.
              if (endpoint.origin !== url.origin) return reject(new TransportError(`The endpoint ${endpoint} is not on ${url.origin}`))
              hasEndpoint = true
              resolve(endpoint)
            } else if (event.event === undefined || event.event === 'message') {
              this.#emit(event.data)
            }
          })
        } catch (error) {
          if (error instanceof FrameTooLargeError) failure = this.#tooLarge(error, `The SSE stream of ${url}`)
          // Otherwise dropped.
        }
        if (!hasEndpoint) reject(failure ?? new TransportError('The SSE stream ended before its endpoint event'))
        if (!this.#isClosed) this.#fail(failure ?? new ConnectionClosedError('The SSE stream closed'))
      })()
    })
  }

  async #postLegacy(payload: JsonRpcPayload): Promise<void> {
    const endpoint = await this.#endpoint!
    const response = await this.#fetch(endpoint, {
      method: 'POST', headers: this.#headers({ 'content-type': 'application/json' }), body: JSON.stringify(payload), signal: this.#abort.signal,
    }).catch(error => { throw new TransportError(`POST ${endpoint} failed: ${messageOf(error)}`, { cause: error }) })
    void response.body?.cancel()
    if (!response.ok) throw UnauthorizedError.fromResponse(response, endpoint) ?? new HttpStatusError(`POST ${endpoint} answered ${response.status}`, response.status)
  }

  async close(): Promise<void> {
    if (this.#isClosed) return
    const sessionId = this.#sessionId
    this.#isClosed = true
    this.#abort.abort()
    this.#incoming.complete()
    if (this.#mode === 'streamable-http' && sessionId !== undefined) {
      // Tell the server the session is over; a server that does not allow DELETE answers 405, which is fine.
      try {
        const response = await this.#fetch(this.#url, { method: 'DELETE', headers: this.#headers({}), signal: AbortSignal.timeout(2000) })
        void response.body?.cancel()
      } catch { /* the server is gone already */ }
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The longest wait a timer holds (2^31 - 1 ms); Node fires a longer one at once. */
const MAX_WAIT_MS = 2 ** 31 - 1

/** How much of an error answer's body is read, for the error message. */
const ERROR_BODY_LIMIT = 64 * 1024

/** What the headers of a modern request are read from. */
interface ModernRequest {
  id: RequestId
  method: string
  params: JsonObject | undefined
  version: string
}

/** The request, when `payload` is one modern request (its `_meta` names a protocol version as a string). */
function modernRequestOf(payload: JsonRpcPayload): ModernRequest | undefined {
  if (Array.isArray(payload) || !('method' in payload) || !('id' in payload)) return undefined
  const version = requestMeta(payload.params)?.[MetaKey.protocolVersion]
  return typeof version === 'string' ? { id: payload.id, method: payload.method, params: payload.params, version } : undefined
}

/** The request id a `notifications/cancelled` names, if `payload` is one. */
function cancelledRequestOf(payload: JsonRpcPayload): RequestId | undefined {
  if (Array.isArray(payload) || !('method' in payload) || 'id' in payload || payload.method !== 'notifications/cancelled') return undefined
  const id = payload.params?.requestId
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

function requestIdsOf(payload: JsonRpcPayload): RequestId[] {
  const ids: RequestId[] = []
  for (const message of Array.isArray(payload) ? payload : [payload]) {
    if ('method' in message && 'id' in message) ids.push(message.id)
  }
  return ids
}

/** The ids of the responses in a decoded message or batch. */
function responseIdsOf(value: unknown): RequestId[] {
  const ids: RequestId[] = []
  for (const message of Array.isArray(value) ? value : [value]) {
    if (message && typeof message === 'object' && !('method' in message)) {
      const id = (message as { id?: unknown }).id
      if (typeof id === 'string' || typeof id === 'number') ids.push(id)
    }
  }
  return ids
}
