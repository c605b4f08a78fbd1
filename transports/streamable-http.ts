import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import { randomBytes } from 'node:crypto'
import { Observable, Subject, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs'
import type { Inbound, SendOptions, Transport, TransportServer } from '../lib/transport.ts'
import type { JsonRpcMessage, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { encodeSseComment, encodeSseEvent } from '../lib/codec/sse.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../lib/schema/types.ts'
import { createMemoryEventStore, type EventStore } from './event-store.ts'
import { LOOPBACK_HOSTS, isAllowedOrigin } from './origin.ts'
import { closeServer, listenOn, urlHost } from './listen.ts'
import { JSON_HEADERS, NodeExchange, WebExchange, replyError, type Exchange, type Sink } from './http-exchange.ts'
import { LegacySession, SSE_HEADERS, type ListenerSession } from './legacy-sse.ts'
import { isFrameError, requestsOf, responseIdOf, responseIds } from './http-ids.ts'

/** Options of {@link streamableHttp}; defaults in {@link STREAMABLE_HTTP_DEFAULTS}. */
export interface StreamableHttpOptions {
  /** Port for `start()` (default 0: any free port; read `url` after start). */
  port?: number
  /** Interface for `start()` (default 127.0.0.1: loopback only). */
  host?: string
  /** The MCP endpoint path (default `/mcp`). */
  path?: string
  /** Also serve the 2024-11-05 HTTP+SSE transport: GET on this path opens the stream (default `/sse`; `false` to turn off). */
  legacySsePath?: string | false
  /** Where legacy clients POST (default `/messages`). */
  legacyMessagesPath?: string
  /** Answer requests with one JSON body instead of an SSE stream (default false). */
  jsonResponse?: boolean
  /** Where SSE events are kept for resumption (default: a bounded in-memory store; `false` for none). */
  eventStore?: EventStore | false
  /**
   * No sessions: every POST is served by a fresh server session that ends with its answer; no
   * Mcp-Session-Id, no GET stream, no DELETE (default false).
   */
  stateless?: boolean
  /** Makes session ids; the default gives 256 random bits, base64url. */
  sessionIdGenerator?: () => string
  /**
   * Ms since the client last sent anything (a POST, a GET, a resume) after which its session is
   * closed, streams included: an open GET stream does not keep a session alive (default 30 minutes).
   */
  sessionIdleTimeout?: number
  /** @deprecated The former name of `sessionIdleTimeout`. */
  sessionTtlMs?: number
  /**
   * Most sessions at once, Streamable HTTP and legacy SSE together. At the cap, the least recently
   * active session with no request in flight is evicted if it has been idle `sessionEvictionMinIdle`,
   * otherwise the new session is refused with 503 and Retry-After (default 10,000).
   */
  maxSessions?: number
  /** Ms a session must have been idle before a new one may evict it at `maxSessions` (default 60 s). */
  sessionEvictionMinIdle?: number
  /** Largest request body in bytes; reading stops as soon as it is passed and 413 answers (default 4 MiB). */
  maxBodyBytes?: number
  /** Ms allowed for a whole request body; a slower body gets 408 and its connection closes (default 30 s). */
  bodyTimeoutMs?: number
  /**
   * Bytes an SSE stream may buffer for a client that does not read; past it the stream is closed
   * (a Streamable HTTP client resumes with Last-Event-ID; a legacy SSE session ends) (default 1 MiB).
   */
  streamHighWaterMark?: number
  /** SSE streams a session keeps (open, or kept for resumption); past it the oldest detached one is forgotten (default 100). */
  maxStreamsPerSession?: number
  /** Origins allowed to call (default: http(s)://localhost, 127.0.0.1 and [::1] on any port). Requests without Origin pass. */
  allowedOrigins?: readonly string[]
  /** Host header values allowed, compared without case (default: the loopback names on any port when bound to loopback; no check otherwise). */
  allowedHosts?: readonly string[]
  /** CORS: origins that get Access-Control-Allow-Origin (default none; `['*']` for any). */
  corsOrigins?: readonly string[]
  /** The SSE `retry` field sent with the priming event, in ms (default 1,000). */
  retryMs?: number
  /** Keep-alive comment interval on open SSE streams, in ms (default 15,000; 0 turns it off). */
  keepAliveMs?: number
  /** Protocol versions accepted in MCP-Protocol-Version (default: every supported revision). */
  protocolVersions?: readonly string[]
  /** Where the idle clock, the sweeps and the body timeout take their time (default: the real clock). */
  scheduler?: SchedulerLike
}

/** DEFAULTS of {@link StreamableHttpOptions}: every limit of the HTTP listener (README, "Limits"). */
export const STREAMABLE_HTTP_DEFAULTS = {
  host: '127.0.0.1', path: '/mcp', legacySsePath: '/sse', legacyMessagesPath: '/messages',
  sessionIdleTimeout: 30 * 60_000,
  /** @deprecated The former name of `sessionIdleTimeout`. */
  sessionTtlMs: 30 * 60_000,
  maxSessions: 10_000, sessionEvictionMinIdle: 60_000,
  maxBodyBytes: DEFAULT_MAX_MESSAGE_SIZE, bodyTimeoutMs: 30_000,
  streamHighWaterMark: 1024 * 1024, maxStreamsPerSession: 100,
  retryMs: 1000, keepAliveMs: 15_000,
} as const

/**
 * A Streamable HTTP server (MCP 2025-03-26 onward) with the legacy HTTP+SSE transport beside it:
 * one implementation, three ways to mount it.
 *
 * - `handle(request)` — a web-standard handler (`Request -> Promise<Response>`) for Hono, Bun, Deno, workers;
 * - `nodeHandler(req, res)` — for node:http, Express, Fastify;
 * - `start()` — its own node:http server on `host:port` (127.0.0.1 by default).
 *
 * Each new session (an initialize POST, or a legacy SSE GET) emits a {@link Transport} on
 * `connections`; `McpServer.listen(server)` serves them.
 *
 * @example
 * const http = streamableHttp({ port: 3000 })
 * await mcpServer.listen(http)
 * console.log(http.url) // http://127.0.0.1:3000/mcp
 */
export interface StreamableHttpServer extends TransportServer {
  handle(request: Request): Promise<Response>
  nodeHandler(req: IncomingMessage, res: ServerResponse): void
  start(): Promise<void>
  /** The endpoint URL once started. */
  readonly url: string | undefined
  /** The node:http server `start()` made (to attach a WebSocket listener to the same port). */
  readonly httpServer: HttpServer | undefined
  /** Sessions open now (Streamable HTTP and legacy SSE). */
  readonly sessionCount: number
  close(): Promise<void>
}

/** Makes a {@link StreamableHttpServer}. */
export function streamableHttp(options: StreamableHttpOptions = {}): StreamableHttpServer {
  return new HttpTransportServer(options)
}

/** What every session of one listener shares (one object, so a session holds one pointer to it). */
interface SessionConfig {
  readonly eventStore: EventStore | undefined
  readonly retryMs: number
  readonly highWaterMark: number
  readonly maxStreams: number
  /** A stream id unique in this listener and not derived from any session id. */
  nextStreamId(): string
}

type AnySession = HttpSession | LegacySession

class HttpTransportServer implements StreamableHttpServer {
  readonly #options: StreamableHttpOptions
  readonly #connections = new Subject<Transport>()
  readonly connections: Observable<Transport> = this.#connections.asObservable()
  /** Every session, Streamable HTTP and legacy, least recently active first (touching moves one to the end). */
  readonly #sessions = new Map<string, AnySession>()
  readonly #config: SessionConfig
  readonly #path: string
  readonly #versions: readonly string[]
  /** Allowed Host values, lower-cased: host names compare without case. */
  readonly #allowedHosts: readonly string[] | undefined
  readonly #now: () => number
  readonly #idleTimeout: number
  #http: HttpServer | undefined
  #url: string | undefined
  /** Sweeps idle sessions and sends keep-alives; unref'd so it never holds the process open. */
  #timer: ReturnType<typeof setInterval> | undefined
  /** The same, on an injected scheduler. */
  #sweeping: Subscription | undefined
  #lastKeepAlive: number
  #isClosed = false

  constructor(options: StreamableHttpOptions) {
    this.#options = options
    const scheduler = options.scheduler
    this.#now = scheduler === undefined ? Date.now : () => scheduler.now()
    this.#lastKeepAlive = this.#now()
    const eventStore = options.eventStore === false ? undefined : options.eventStore ?? createMemoryEventStore()
    // Stream ids: a random prefix per listener and a counter, so no id says which session it is of.
    const streamPrefix = randomBytes(6).toString('base64url')
    let streamCount = 0
    this.#config = {
      eventStore,
      retryMs: options.retryMs ?? STREAMABLE_HTTP_DEFAULTS.retryMs,
      highWaterMark: options.streamHighWaterMark ?? STREAMABLE_HTTP_DEFAULTS.streamHighWaterMark,
      maxStreams: options.maxStreamsPerSession ?? STREAMABLE_HTTP_DEFAULTS.maxStreamsPerSession,
      nextStreamId: () => `${streamPrefix}${(++streamCount).toString(36)}`,
    }
    this.#path = options.path ?? STREAMABLE_HTTP_DEFAULTS.path
    this.#versions = options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS
    this.#allowedHosts = options.allowedHosts?.map(host => host.toLowerCase())
    this.nodeHandler = this.nodeHandler.bind(this)
    const ttl = options.sessionIdleTimeout ?? options.sessionTtlMs ?? STREAMABLE_HTTP_DEFAULTS.sessionIdleTimeout
    this.#idleTimeout = ttl
    const keepAlive = options.keepAliveMs ?? STREAMABLE_HTTP_DEFAULTS.keepAliveMs
    const tick = Math.max(50, Math.min(ttl / 4, keepAlive > 0 ? keepAlive : Infinity, 60_000))
    const sweep = () => this.#sweep(keepAlive)
    if (scheduler === undefined) {
      this.#timer = setInterval(sweep, tick)
      this.#timer.unref()
    } else {
      this.#sweeping = scheduler.schedule(function (this: SchedulerAction<unknown>) { sweep(); this.schedule(undefined, tick) }, tick)
    }
  }

  get url(): string | undefined { return this.#url }
  get httpServer(): HttpServer | undefined { return this.#http }
  get sessionCount(): number { return this.#sessions.size }

  async start(): Promise<void> {
    if (this.#http !== undefined) return
    const host = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    const http = createHttpServer({ noDelay: true, keepAliveTimeout: 30_000 }, this.nodeHandler)
    this.#http = http
    const port = await listenOn(http, this.#options.port ?? 0, host)
    this.#url = `http://${urlHost(host)}:${port}${this.#path}`
  }

  async close(): Promise<void> {
    if (this.#isClosed) return
    this.#isClosed = true
    clearInterval(this.#timer)
    this.#sweeping?.unsubscribe()
    for (const session of [...this.#sessions.values()]) session.end()
    this.#sessions.clear()
    this.#connections.complete()
    if (this.#http !== undefined) await closeServer(this.#http)
  }

  #sweep(keepAlive: number): void {
    const now = this.#now()
    // Least recently active first: the first session still within its idle time ends the sweep.
    // An open stream does not count as activity, so a client that only listens cannot pin a slot.
    for (const session of this.#sessions.values()) {
      if (now - session.lastSeen <= this.#idleTimeout) break
      session.end()
    }
    if (keepAlive > 0 && now - this.#lastKeepAlive >= keepAlive) {
      this.#lastKeepAlive = now
      for (const session of this.#sessions.values()) session.keepAlive()
    }
  }

  /** Marks a session active now: it moves to the end of the recency order. */
  #touch(session: AnySession): void {
    session.lastSeen = this.#now()
    this.#sessions.delete(session.id)
    this.#sessions.set(session.id, session)
  }

  /**
   * Room for one more session: below `maxSessions` there is; at it, the least recently active
   * session with no request in flight is evicted once idle `sessionEvictionMinIdle`. Otherwise
   * answers 503 with Retry-After (when that session becomes evictable) and returns false.
   */
  #admit(exchange: Exchange): boolean {
    if (this.#sessions.size < (this.#options.maxSessions ?? STREAMABLE_HTTP_DEFAULTS.maxSessions)) return true
    const minIdle = this.#options.sessionEvictionMinIdle ?? STREAMABLE_HTTP_DEFAULTS.sessionEvictionMinIdle
    const now = this.#now()
    let candidate: AnySession | undefined
    for (const session of this.#sessions.values()) if (!session.hasRequestInFlight()) { candidate = session; break }
    if (candidate !== undefined && now - candidate.lastSeen >= minIdle) {
      candidate.end()
      return true
    }
    const wait = candidate === undefined ? minIdle : minIdle - (now - candidate.lastSeen)
    replyError(exchange, 503, -32000, 'Service Unavailable: too many sessions', { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) })
    return false
  }

  /**
   * Forgets a session that ended. One function for every session: a closure made in a request's
   * handler would keep that request's objects alive as long as the session.
   */
  readonly #onEnd = (session: AnySession) => { if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id) }

  #register<S extends AnySession>(session: S): S {
    this.#sessions.set(session.id, session)
    return session
  }

  /** A fresh session id, or undefined (answered 500) when the generator repeats one in use. */
  #newSessionId(exchange: Exchange): string | undefined {
    const id = (this.#options.sessionIdGenerator ?? defaultSessionId)()
    if (!this.#sessions.has(id)) return id
    replyError(exchange, 500, -32603, 'Internal error: the session id generator repeated an id in use')
    return undefined
  }

  nodeHandler(req: IncomingMessage, res: ServerResponse): void {
    const exchange = new NodeExchange(req, res, this.#corsHeaders(req.headers.origin))
    this.#dispatch(exchange).catch(error => {
      if (!res.headersSent) { res.statusCode = 500; res.end() } else res.destroy(error instanceof Error ? error : undefined)
    })
  }

  async handle(request: Request): Promise<Response> {
    const exchange = new WebExchange(request, this.#corsHeaders(request.headers.get('origin') ?? undefined))
    this.#dispatch(exchange).catch(() => exchange.reply(500, {}))
    return exchange.response
  }

  async #dispatch(exchange: Exchange): Promise<void> {
    if (!this.#checkOrigin(exchange)) return
    if (exchange.method === 'OPTIONS') {
      return exchange.reply(204, { 'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS', 'access-control-allow-headers': 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id', 'access-control-max-age': '600' })
    }
    const legacySse = this.#options.legacySsePath === false ? undefined : this.#options.legacySsePath ?? STREAMABLE_HTTP_DEFAULTS.legacySsePath
    const legacyMessages = this.#options.legacyMessagesPath ?? STREAMABLE_HTTP_DEFAULTS.legacyMessagesPath
    const path = exchange.pathname
    if (path === this.#path) return this.#handleMcp(exchange)
    if (legacySse !== undefined && path === legacySse && exchange.method === 'GET') return this.#openLegacy(exchange, legacyMessages)
    if (legacySse !== undefined && path === legacyMessages && exchange.method === 'POST') return this.#postLegacy(exchange)
    exchange.reply(404, { 'content-type': 'text/plain' }, 'Not Found')
  }

  #checkOrigin(exchange: Exchange): boolean {
    // DNS-rebinding protection: a page on a foreign origin must not reach a local server.
    const origin = exchange.header('origin')
    if (origin !== null && !isAllowedOrigin(origin, this.#options.allowedOrigins)) { replyError(exchange, 403, -32000, 'Forbidden: origin not allowed'); return false }
    const host = exchange.header('host')
    const boundHost = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    const isLoopbackBound = boundHost === '127.0.0.1' || boundHost === 'localhost' || boundHost === '::1'
    if (host !== null && (this.#allowedHosts !== undefined || isLoopbackBound)) {
      // RFC 9110: host names are case-insensitive (LOCALHOST is localhost).
      const value = host.toLowerCase()
      const name = value.replace(/:\d+$/, '')
      const allowed = this.#allowedHosts ?? LOOPBACK_HOSTS
      if (!allowed.includes(value) && !allowed.includes(name)) { replyError(exchange, 403, -32000, 'Forbidden: host not allowed'); return false }
    }
    return true
  }

  #corsHeaders(origin: string | undefined): Record<string, string> {
    const origins = this.#options.corsOrigins
    if (origins === undefined || origin === undefined) return {}
    if (!origins.includes('*') && !origins.includes(origin)) return {}
    return { 'access-control-allow-origin': origins.includes('*') ? '*' : origin, 'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version', vary: 'origin' }
  }

  async #handleMcp(exchange: Exchange): Promise<void> {
    const version = exchange.header('mcp-protocol-version')
    // MCP 2025-06-18 transports: an unsupported MCP-Protocol-Version is answered 400.
    if (version !== null && !this.#versions.includes(version)) return replyError(exchange, 400, -32000, `Bad Request: unsupported protocol version ${version}`)
    switch (exchange.method) {
      case 'POST': return this.#post(exchange)
      case 'GET': return this.#get(exchange)
      case 'DELETE': return this.#delete(exchange)
      default: return exchange.reply(405, { allow: 'GET, POST, DELETE, OPTIONS', 'content-type': 'text/plain' }, 'Method Not Allowed')
    }
  }

  #session(exchange: Exchange): HttpSession | undefined {
    const id = exchange.header('mcp-session-id')
    if (id === null) { replyError(exchange, 400, -32000, 'Bad Request: Mcp-Session-Id header is required'); return undefined }
    const session = this.#sessions.get(id)
    // Unknown and expired look the same, so a guessed id learns nothing.
    if (!(session instanceof HttpSession)) { replyError(exchange, 404, -32001, 'Session not found'); return undefined }
    // MCP 2025-06-18 transports: the client sends the negotiated version; another one is a bad request.
    const version = exchange.header('mcp-protocol-version')
    if (version !== null && session.protocolVersion !== undefined && version !== session.protocolVersion) {
      replyError(exchange, 400, -32000, `Bad Request: MCP-Protocol-Version ${version} is not the session's ${session.protocolVersion}`)
      return undefined
    }
    this.#touch(session)
    return session
  }

  /** The body under the listener's limits, or undefined once refused (413 past the size, 408 past the time). */
  async #body(exchange: Exchange): Promise<Uint8Array | undefined> {
    const result = await exchange.body({
      maxBytes: this.#options.maxBodyBytes ?? STREAMABLE_HTTP_DEFAULTS.maxBodyBytes,
      timeoutMs: this.#options.bodyTimeoutMs ?? STREAMABLE_HTTP_DEFAULTS.bodyTimeoutMs,
      scheduler: this.#options.scheduler,
    })
    if (result.type === 'body') return result.body
    const [status, message] = result.type === 'too-large' ? [413, 'Payload Too Large'] : [408, 'Request Timeout: the body did not arrive in time']
    exchange.refuse(status, JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }))
    return undefined
  }

  async #post(exchange: Exchange): Promise<void> {
    const accept = exchange.header('accept') ?? ''
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return replyError(exchange, 406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream')
    }
    const contentType = exchange.header('content-type') ?? ''
    if (!contentType.includes('application/json')) return replyError(exchange, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json')
    const body = await this.#body(exchange)
    if (body === undefined) return
    const decoded = decodeJsonFrame(body, Infinity)
    if (decoded.type === 'invalid') return replyError(exchange, 400, -32700, decoded.error.message)
    const payload = decoded.message
    const { ids, isInitialize, cancelled, hasBadId } = requestsOf(payload)
    // 1e400 parses to Infinity, which no answer could carry back (JSON writes it as null).
    if (hasBadId) return replyError(exchange, 400, -32600, 'Invalid Request: an id must be a string or a finite number')
    if (this.#options.stateless) return this.#postStateless(exchange, payload, ids)
    let session: HttpSession
    if (isInitialize) {
      if (Array.isArray(payload) && payload.length > 1) return replyError(exchange, 400, -32600, 'Invalid Request: initialize must be sent alone')
      if (!this.#admit(exchange)) return
      const id = this.#newSessionId(exchange)
      if (id === undefined) return
      session = this.#register(new HttpSession(id, this.#config, this.#now(), this.#onEnd))
      session.initializeRequestId = ids[0]
      session.remoteAddress = exchange.remoteAddress
      this.#connections.next(session)
    } else {
      const found = this.#session(exchange)
      if (found === undefined) return
      session = found
    }
    const headers = { 'mcp-session-id': session.id }
    // MCP basic: a request id is not reused in a session. Refused here, before the connection sees it,
    // since its answer would otherwise take the first request's place on the first POST.
    const reused = ids.find(id => session.isInFlight(id))
    if (reused !== undefined) {
      return replyError(exchange, 400, -32600, `Invalid Request: request id ${JSON.stringify(reused)} is already in use`, headers, Array.isArray(payload) ? null : reused)
    }
    const frameErrorReply = (error: JsonRpcPayload) => exchange.reply(400, { ...headers, ...JSON_HEADERS }, JSON.stringify(error))
    if (ids.length === 0) {
      const error = session.receive(payload)
      if (error !== undefined) return frameErrorReply(error)
      session.abandon(cancelled)
      return exchange.reply(202, headers)
    }
    if (this.#options.jsonResponse) {
      const answer = session.expectJson(ids, Array.isArray(payload))
      const error = session.receive(payload)
      if (error !== undefined) { session.forget(ids); return frameErrorReply(error) }
      session.abandon(cancelled)
      const result = await answer
      // Every request of the POST was cancelled: nothing to answer with.
      return result === undefined ? exchange.reply(202, headers) : exchange.reply(200, { ...headers, ...JSON_HEADERS }, JSON.stringify(result))
    }
    const stream = session.openPostStream(ids, exchange.header('mcp-protocol-version') ?? undefined)
    if (stream === undefined) return replyError(exchange, 429, -32000, 'Too Many Requests: too many open streams in this session', headers)
    const error = session.receive(payload)
    // An error about the whole body (a batch where batches are not allowed): on this POST, as 400.
    if (error !== undefined) { session.drop(stream); return frameErrorReply(error) }
    session.abandon(cancelled)
    session.attach(stream, exchange)
  }

  async #postStateless(exchange: Exchange, payload: unknown, requestIds: RequestId[]): Promise<void> {
    const session = new HttpSession('', STATELESS_CONFIG, 0, () => {})
    session.isStateless = true
    this.#connections.next(session)
    if (requestIds.length === 0) {
      const error = session.receive(payload)
      // Let the notification reach its handler before the one-shot session ends.
      setImmediate(() => session.end())
      return error !== undefined ? exchange.reply(400, JSON_HEADERS, JSON.stringify(error)) : exchange.reply(202, {})
    }
    const answer = session.expectJson(requestIds, Array.isArray(payload))
    const error = session.receive(payload)
    try {
      if (error !== undefined) return exchange.reply(400, JSON_HEADERS, JSON.stringify(error))
      const result = await answer
      if (result === undefined) exchange.reply(202, {})
      else exchange.reply(200, JSON_HEADERS, JSON.stringify(result))
    } finally {
      session.end()
    }
  }

  async #get(exchange: Exchange): Promise<void> {
    if (this.#options.stateless) return exchange.reply(405, { allow: 'POST' })
    const accept = exchange.header('accept') ?? ''
    if (!accept.includes('text/event-stream')) return replyError(exchange, 406, -32000, 'Not Acceptable: the client must accept text/event-stream')
    const found = this.#session(exchange)
    if (found === undefined) return
    const lastEventId = exchange.header('last-event-id')
    if (lastEventId !== null) {
      if (!(await found.resume(exchange, lastEventId))) replyError(exchange, 404, -32000, 'Unknown Last-Event-ID')
      return
    }
    if (!found.openStandalone(exchange, exchange.header('mcp-protocol-version') ?? undefined)) {
      replyError(exchange, 429, -32000, 'Too Many Requests: too many open streams in this session', { 'mcp-session-id': found.id })
    }
  }

  #delete(exchange: Exchange): void {
    if (this.#options.stateless) return exchange.reply(405, { allow: 'POST' })
    const found = this.#session(exchange)
    if (found === undefined) return
    found.end()
    exchange.reply(200, {})
  }

  // ---- legacy HTTP+SSE (2024-11-05) ----

  #openLegacy(exchange: Exchange, messagesPath: string): void {
    const accept = exchange.header('accept') ?? ''
    if (!accept.includes('text/event-stream') && !accept.includes('*/*') && accept !== '') return replyError(exchange, 406, -32000, 'Not Acceptable')
    if (!this.#admit(exchange)) return
    const id = this.#newSessionId(exchange)
    if (id === undefined) return
    const session = this.#register(new LegacySession(id, this.#now(), this.#onEnd))
    session.attach(exchange, `${messagesPath}?sessionId=${encodeURIComponent(id)}`, this.#config.highWaterMark)
    session.remoteAddress = exchange.remoteAddress
    this.#connections.next(session)
  }

  async #postLegacy(exchange: Exchange): Promise<void> {
    const id = new URLSearchParams(exchange.search).get('sessionId')
    const session = id === null ? undefined : this.#sessions.get(id)
    if (!(session instanceof LegacySession)) return exchange.reply(404, { 'content-type': 'text/plain' }, 'Session not found')
    this.#touch(session)
    const body = await this.#body(exchange)
    if (body === undefined) return
    session.receiveFrame(body)
    exchange.reply(202, { 'content-type': 'text/plain' }, 'Accepted')
  }
}

function defaultSessionId(): string {
  // 256 bits from the OS CSPRNG: unguessable, and URL- and header-safe.
  return randomBytes(32).toString('base64url')
}

/** Stateless sessions keep no streams and no events. */
const STATELESS_CONFIG: SessionConfig = { eventStore: undefined, retryMs: 0, highWaterMark: 0, maxStreams: 0, nextStreamId: () => '' }

// ---- one Streamable HTTP session ----

/** One SSE stream of a session: a POST's answer stream, or a standalone GET stream. */
class HttpStream {
  /** Requests whose responses still have to go out on this stream (POST streams). */
  readonly pending: Set<RequestId> | undefined
  /** Where events are written; undefined while the client is away (they are stored for resumption). */
  sink: Sink | undefined
  /** Events written before the HTTP answer started (while the POST's body is being handled). */
  buffer: string[] | undefined = []

  constructor(readonly id: string, pending: RequestId[] | undefined) {
    this.pending = pending === undefined ? undefined : new Set(pending)
  }

  get isStandalone(): boolean { return this.pending === undefined }

  write(text: string): void {
    if (this.sink !== undefined) this.sink.write(text)
    else this.buffer?.push(text)
  }

  end(): void {
    const sink = this.sink
    this.sink = undefined
    this.buffer = undefined
    sink?.end()
  }
}

/** The answers of one JSON-response POST, collected until each of its requests is answered or cancelled. */
class JsonAnswer {
  readonly answers: JsonRpcMessage[] = []
  readonly pending: Set<RequestId>
  constructor(ids: RequestId[], readonly isBatch: boolean, readonly done: (payload: JsonRpcPayload | undefined) => void) {
    this.pending = new Set(ids)
  }
  add(payload: JsonRpcPayload): void {
    for (const message of Array.isArray(payload) ? payload : [payload]) this.answers.push(message)
    for (const id of responseIds(payload)) this.pending.delete(id)
    this.#check()
  }
  drop(id: RequestId): void {
    this.pending.delete(id)
    this.#check()
  }
  #check(): void {
    if (this.pending.size > 0) return
    const answers = this.answers
    this.done(answers.length === 0 ? undefined : this.isBatch ? answers : answers[0]!)
  }
}

type Route = HttpStream | JsonAnswer

class HttpSession implements Transport, ListenerSession {
  /** The client's IP address (for the bridge's per-client limit). */
  remoteAddress: string | undefined
  readonly #inbound = new Subject<Inbound>()
  /** Streams by id: open ones, and those kept for resumption (created on the first). */
  #streams: Map<string, HttpStream> | undefined
  /** Where each request in flight is answered (created on the first). */
  #routes: Map<RequestId, Route> | undefined
  /** Set while a POST body is handed to the connection: errors about the whole body collect here. */
  #frameErrors: JsonRpcPayload[] | undefined
  /** One exchange, no session (stateless mode). */
  isStateless = false
  /** The id of the initialize request, to read the negotiated version off its answer. */
  initializeRequestId: RequestId | undefined
  /** The negotiated protocol version, once initialize is answered. */
  protocolVersion: string | undefined
  #isEnded = false

  constructor(readonly id: string, readonly config: SessionConfig, public lastSeen: number, readonly onEnd: (session: HttpSession) => void) {}

  get kind(): string { return 'streamable-http' }
  get inbound(): Observable<Inbound> { return this.#inbound.asObservable() }

  /**
   * Hands a POST's body to the connection. Returns the error the connection answered about the
   * body as a whole (id null: a batch where none is allowed), which belongs on this POST.
   */
  receive(payload: unknown): JsonRpcPayload | undefined {
    const errors: JsonRpcPayload[] = []
    this.#frameErrors = errors
    try {
      this.#inbound.next({ type: 'message', message: payload })
    } finally {
      this.#frameErrors = undefined
    }
    return errors[0]
  }

  isInFlight(id: RequestId): boolean {
    return this.#routes?.has(id) ?? false
  }

  hasRequestInFlight(): boolean {
    return this.#routes !== undefined && this.#routes.size > 0
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version
  }

  keepAlive(): void {
    if (this.#streams === undefined) return
    for (const stream of this.#streams.values()) if (stream.sink !== undefined) stream.write(KEEP_ALIVE)
  }

  #route(ids: RequestId[], route: Route): void {
    this.#routes ??= new Map()
    for (const id of ids) this.#routes.set(id, route)
  }

  /** Collects the answers to `ids` for one JSON body; undefined when every request was cancelled. */
  expectJson(ids: RequestId[], isBatch: boolean): Promise<JsonRpcPayload | undefined> {
    return new Promise(resolve => this.#route(ids, new JsonAnswer(ids, isBatch, resolve)))
  }

  /** Forgets the routes of requests the connection will not answer one by one. */
  forget(ids: RequestId[]): void {
    for (const id of ids) this.#routes?.delete(id)
    this.#compact()
  }

  /**
   * Requests the client cancelled (notifications/cancelled) get no answer: their POST must not
   * wait for one. A JSON POST answers without them; a stream ends once nothing else is pending.
   */
  abandon(ids: RequestId[]): void {
    for (const id of ids) {
      // MCP lifecycle: initialize cannot be cancelled, so its answer still comes.
      if (id === this.initializeRequestId) continue
      const route = this.#routes?.get(id)
      if (route === undefined) continue
      this.#routes!.delete(id)
      if (route instanceof JsonAnswer) { route.drop(id); continue }
      route.pending!.delete(id)
      if (route.pending!.size === 0 && route.sink !== undefined) this.#finish(route)
    }
    this.#compact()
  }

  /** A new stream, registered; undefined when the session holds `maxStreams` and none can go. */
  #newStream(pending: RequestId[] | undefined, protocolVersion: string | undefined): HttpStream | undefined {
    this.#streams ??= new Map()
    if (this.#streams.size >= this.config.maxStreams) {
      // The oldest stream the client is away from makes room (its events go with it).
      let oldest: HttpStream | undefined
      for (const stream of this.#streams.values()) if (stream.sink === undefined) { oldest = stream; break }
      if (oldest === undefined) return undefined
      this.drop(oldest)
    }
    const stream = new HttpStream(this.config.nextStreamId(), pending)
    ;(this.#streams ??= new Map()).set(stream.id, stream)
    if (pending !== undefined) this.#route(pending, stream)
    // SEP-1699: a priming event with an id (and the retry delay) lets the client resume at once.
    // Only clients of 2025-11-25 or later expect its empty data.
    const version = this.protocolVersion ?? protocolVersion
    const store = this.config.eventStore
    if (store !== undefined && (version === undefined || version >= '2025-11-25')) {
      const prime = (eventId: string) => stream.write(`id: ${eventId}\nretry: ${this.config.retryMs}\ndata: \n\n`)
      const stored = store.storeEvent(stream.id, PRIMING, { sessionId: this.id, data: '[]' })
      if (typeof stored === 'string') prime(stored)
      else void stored.then(prime, () => {})
    }
    return stream
  }

  /** The answer stream of a POST; it starts (`attach`) once the body went to the connection. */
  openPostStream(requestIds: RequestId[], protocolVersion: string | undefined): HttpStream | undefined {
    return this.#newStream(requestIds, protocolVersion)
  }

  /** A standalone GET stream for messages unrelated to a request; false when the session has too many. */
  openStandalone(exchange: Exchange, protocolVersion: string | undefined): boolean {
    const stream = this.#newStream(undefined, protocolVersion)
    if (stream === undefined) return false
    this.attach(stream, exchange)
    return true
  }

  /** Starts the SSE answer of `stream` on `exchange` with what was written so far. */
  attach(stream: HttpStream, exchange: Exchange): void {
    const sink = exchange.stream(200, { ...SSE_HEADERS, 'mcp-session-id': this.id }, this.config.highWaterMark)
    const early = stream.buffer
    stream.buffer = undefined
    stream.sink = sink
    exchange.onClose(() => { if (stream.sink === sink) this.#detach(stream) })
    if (early !== undefined) for (const text of early) sink.write(text)
    // Answered while the body was being handled: the stream is already done.
    if (stream.pending !== undefined && stream.pending.size === 0 && stream.sink === sink) this.#finish(stream)
  }

  /** Forgets a stream entirely: its routes, and its events in the store. */
  drop(stream: HttpStream): void {
    if (stream.pending !== undefined) for (const id of stream.pending) if (this.#routes?.get(id) === stream) this.#routes.delete(id)
    stream.end()
    this.#streams?.delete(stream.id)
    this.#compact()
    quietly(this.config.eventStore?.deleteStream?.(stream.id))
  }

  /** An idle session keeps no empty tables: a Map keeps its grown capacity after it empties. */
  #compact(): void {
    if (this.#streams?.size === 0) this.#streams = undefined
    if (this.#routes?.size === 0) this.#routes = undefined
  }

  async resume(exchange: Exchange, lastEventId: string): Promise<boolean> {
    const store = this.config.eventStore
    if (store === undefined || this.#streams === undefined) return false
    const replay: string[] = []
    const streamId = await store.replayEventsAfter(lastEventId, (eventId, message) => {
      if (message === PRIMING || (Array.isArray(message) && message.length === 0)) return
      replay.push(encodeSseEvent({ event: 'message', id: eventId, data: JSON.stringify(message) }))
    })
    // The stream must be one of this session's: an event id of another session replays nothing here.
    const stream = streamId === undefined ? undefined : this.#streams.get(streamId)
    if (stream === undefined || this.#isEnded) return false
    const sink = exchange.stream(200, { ...SSE_HEADERS, 'mcp-session-id': this.id }, this.config.highWaterMark)
    for (const text of replay) sink.write(text)
    // The stream is still live (requests not all answered, or the standalone one): reattach.
    if (stream.sink === undefined && this.#streams.has(stream.id)) {
      stream.sink = sink
      exchange.onClose(() => { if (stream.sink === sink) this.#detach(stream) })
      if (stream.pending !== undefined && stream.pending.size === 0) this.#finish(stream)
    } else {
      sink.end()
    }
    return true
  }

  #detach(stream: HttpStream): void {
    stream.sink = undefined
    // Without an event store, nothing can resume it.
    if (this.config.eventStore === undefined) this.drop(stream)
  }

  #finish(stream: HttpStream): void {
    // Called only with the client attached: it has every event, so none needs keeping for replay.
    this.drop(stream)
  }

  /** The id a response answers; for a batch of responses, the first one with a route. */
  #routedResponseId(payload: JsonRpcPayload): RequestId | undefined {
    if (!Array.isArray(payload)) return responseIdOf(payload)
    const ids = responseIds(payload)
    return ids.find(id => this.isInFlight(id)) ?? ids[0]
  }

  /** The newest standalone stream with a client on it. */
  #standalone(): HttpStream | undefined {
    let found: HttpStream | undefined
    if (this.#streams !== undefined) for (const stream of this.#streams.values()) if (stream.isStandalone && stream.sink !== undefined) found = stream
    return found
  }

  send(payload: JsonRpcPayload, options?: SendOptions): void {
    if (this.#isEnded) throw new TransportError('The HTTP session has ended')
    const responseId = this.#routedResponseId(payload)
    // An error answering nothing this session routes, sent while a body is handed over: it is about
    // that body as a whole (id null, or an id the transport did not read as a request's).
    if (this.#frameErrors !== undefined && options?.relatedRequestId === undefined && isFrameError(payload) && (responseId === undefined || !this.isInFlight(responseId))) {
      this.#frameErrors.push(payload)
      return
    }
    if (responseId !== undefined && responseId === this.initializeRequestId && !Array.isArray(payload) && 'result' in payload) {
      const version = payload.result.protocolVersion
      if (typeof version === 'string') this.protocolVersion = version
    }
    const key = responseId ?? options?.relatedRequestId
    const route = key === undefined ? undefined : this.#routes?.get(key)
    if (route instanceof JsonAnswer && responseId !== undefined) {
      for (const id of responseIds(payload)) this.#routes!.delete(id)
      this.#compact()
      return route.add(payload)
    }
    const stream = route instanceof HttpStream ? route : this.#standalone()
    if (stream === undefined) return
    const data = JSON.stringify(payload)
    const deliver = (eventId: string | undefined) => {
      stream.write(eventId === undefined ? `event: message\ndata: ${data}\n\n` : `event: message\nid: ${eventId}\ndata: ${data}\n\n`)
      if (responseId !== undefined && stream.pending !== undefined) {
        for (const id of responseIds(payload)) { stream.pending.delete(id); if (this.#routes?.get(id) === stream) this.#routes.delete(id) }
        // Every request of the POST is answered: its stream is done.
        if (stream.pending.size === 0 && stream.sink !== undefined) this.#finish(stream)
        else this.#compact()
      }
    }
    const store = this.config.eventStore
    if (store === undefined) return deliver(undefined)
    const stored = store.storeEvent(stream.id, payload, { sessionId: this.id, data })
    if (typeof stored === 'string') deliver(stored)
    else void stored.then(deliver, () => deliver(undefined))
  }

  closeStream(requestId: RequestId): void {
    // Without a store the messages sent meanwhile would be lost, so the stream stays open.
    if (this.config.eventStore === undefined) return
    const route = this.#routes?.get(requestId)
    if (!(route instanceof HttpStream) || route.sink === undefined) return
    // Ended but kept: later events are stored under it and replayed when the client comes back.
    route.end()
  }

  async close(): Promise<void> {
    this.end()
  }

  end(): void {
    if (this.#isEnded) return
    this.#isEnded = true
    const store = this.config.eventStore
    if (this.#streams !== undefined) {
      for (const stream of this.#streams.values()) {
        stream.end()
        if (store?.deleteSession === undefined) quietly(store?.deleteStream?.(stream.id))
      }
      this.#streams.clear()
    }
    // Everything the session stored goes with it (DELETE, idle expiry, eviction, close).
    quietly(store?.deleteSession?.(this.id))
    this.#routes?.clear()
    this.#inbound.complete()
    this.onEnd(this)
  }
}

/** What the store keeps for a priming event: no message, only a position in the stream. */
const PRIMING = [] as unknown as JsonRpcPayload
const KEEP_ALIVE = encodeSseComment('keep-alive')

/** Lets a store's asynchronous clean-up fail without an unhandled rejection: it only frees memory. */
function quietly(result: void | Promise<void> | undefined): void {
  if (result !== undefined) result.catch(() => {})
}
