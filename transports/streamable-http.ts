import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http'
import { Observable, Subject, asyncScheduler, type SchedulerAction, type SchedulerLike, type Subscription } from '../lib/rx.ts'
import type { Transport, TransportServer } from '../lib/transport.ts'
import { principalKey, type Authenticator } from '../lib/auth.ts'
import { createMemoryRateLimiterStore, type RateLimiterStore, type TokenBucketOptions } from '../lib/token-bucket.ts'
import { ErrorCode, StructureLimitError } from '../lib/jsonrpc/errors.ts'
import { HttpGuard } from './http-guard.ts'
import { DEFAULT_FAILED_AUTH_LIMIT, retryAfterSeconds, type ClientRequest } from './client-policy.ts'
import { ConcurrencyBudget, SessionAdmission } from './client-budgets.ts'
import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../lib/schema/types.ts'
import { MODERN_PROTOCOL_VERSIONS, isModernVersion } from '../lib/schema/modern.ts'
import { ModernExchange, isModernPost, refuseModernPost } from './http-modern.ts'
import { createMemoryEventStore, type EventStore } from './event-store.ts'
import { isAllowedHost, isAllowedOrigin } from './origin.ts'
import { closeServer, listenOn, urlHost } from './listen.ts'
import { JSON_HEADERS, NodeExchange, WebExchange, replyError, type Exchange, type RefusedIds } from './http-exchange.ts'
import { LegacySession } from './legacy-sse.ts'
import { randomId, requestsOf } from './http-ids.ts'
import { HttpSession, type SessionConfig } from './http-session.ts'
import type { SessionCluster } from './http-cluster.ts'
import { SharedSessions, type AnySession } from './http-shared.ts'
import { requestInfo } from './request-info.ts'
import { endStreamsAtExpiry } from './token-expiry.ts'

export { memoryRateLimiterStore, createMemoryRateLimiterStore } from '../lib/token-bucket.ts'
export type { RateLimiter, RateLimiterStore } from '../lib/token-bucket.ts'
export type { ClientRequest } from './client-policy.ts'

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
  /**
   * Answer requests with one JSON body instead of an SSE stream (default false). A modern-era
   * request (2026-07-28) is then answered in JSON too, and its notifications (progress, log
   * messages, a listen stream) are not sent.
   */
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
   * closed, streams included: an open GET stream does not keep a session alive, a request in flight
   * does (default 30 minutes).
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
  /**
   * Most sessions one client holds at once, Streamable HTTP and legacy SSE together; a client is its
   * principal when authenticated, else its address (see `clientAddress`). At it, the client's own
   * least recently active session with no request in flight is evicted if it has been idle
   * `sessionEvictionMinIdle`, otherwise its new session is refused with 429 and Retry-After, while
   * other clients are still served (default 100).
   */
  maxSessionsPerClient?: number
  /**
   * Most sessionless requests held open at once, over every client: modern-era (2026-07-28)
   * requests and their streams, `subscriptions/listen` included, and `stateless` POSTs. Past it a
   * new one is refused with 503 and Retry-After (default 10,000).
   */
  maxExchanges?: number
  /**
   * Most sessionless requests one client holds open at once (the same ones as `maxExchanges`).
   * Past it the client's new one is refused with 429, Retry-After and a -31029 error carrying the
   * request's id, while other clients are still served (default 100).
   */
  maxExchangesPerClient?: number
  /** Ms a session must have been idle before a new one may evict it at `maxSessions` (default 60 s). */
  sessionEvictionMinIdle?: number
  /** Largest request body in bytes; reading stops as soon as it is passed and 413 answers (default 4 MiB). */
  maxBodyBytes?: number
  /**
   * Bounds on each request body's nesting and members (default `STRUCTURE_DEFAULTS`: 128 levels,
   * 100,000 members), checked before it is parsed: a body past them is refused unparsed with
   * -32700 and the request's id when it could be read (on `/mcp` as a 400 answer, on the legacy
   * `/messages` on the session's stream), and nothing of it is served.
   */
  structureLimits?: StructureLimits
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
  /** Protocol versions accepted in MCP-Protocol-Version, both eras (default: every supported revision, 2026-07-28 first). */
  protocolVersions?: readonly string[]
  /**
   * Refuse (400) a request whose MCP-Protocol-Version is supported but not the one its session
   * negotiated (default false). The spec requires 400 only for invalid or unsupported versions, and
   * the official conformance suite sends another supported version on a session and expects it
   * served, so the strict check is opt-in.
   */
  strictProtocolVersion?: boolean
  /** Where the idle clock, the sweeps and the body timeout take their time (default: the real clock). */
  scheduler?: SchedulerLike
  /**
   * Authorization (default none): every request to the MCP endpoint and the legacy SSE paths must
   * pass `auth.authenticate` (else 401 with its challenge), and each POST `auth.authorize` (else
   * 403, insufficient scope); `auth.serve` answers its metadata documents. A session belongs to the
   * principal that created it: another principal's request naming it gets 404. A response stream
   * (a GET stream, a resumed one, a POST's SSE answer, a legacy `/sse` stream, a modern-era
   * `subscriptions/listen` stream) ends when the token of the request that opened it expires
   * (`principal.expiresAt`, on the `scheduler`'s clock): the client reconnects or resumes with a
   * fresh token; a legacy `/sse` session ends with its stream. `bearerAuth` from `rxmcp/auth` makes
   * one (OAuth 2.1 bearer tokens, RFC 9728 Protected Resource Metadata).
   */
  auth?: Authenticator
  /**
   * A request budget per caller (default none): a token bucket per principal (else per client
   * address); each request of a POST spends one, and a POST over budget is answered 429 with
   * Retry-After and a -31029 error per request; callers with neither principal nor known address
   * share one bucket. The buckets live in `rateLimiterStore`. For other transports use the
   * `rateLimit` middleware.
   */
  rateLimit?: TokenBucketOptions
  /**
   * The budget of failed authentications per client address, when `auth` is set (default 60 at
   * once, refilled at 1 a second; `false` turns it off): every request `auth` refuses with a 4xx
   * (401: a missing, invalid or expired credential) spends a token; past the budget the address is
   * answered 429 with Retry-After and -31029, and its requests are not verified at all until a token
   * is back, valid credentials included (they come from the same address as the flood). A 5xx
   * refusal (the verifier cannot decide) and a 429 (a valid credential over a quota of its own,
   * such as its DPoP key's share of the replay cache) cost nothing, and a request of unknown
   * address (a web Request without `clientAddress`) is not budgeted.
   */
  failedAuthLimit?: TokenBucketOptions | false
  /**
   * Where the `rateLimit` and `failedAuthLimit` buckets live (default: a store of this listener's
   * own in this process's memory, read back as `rateLimiterStore`; each instance has its own).
   * `redisScaleOut(url).http` from `rxmcp/transports/redis` gives one in Redis, so every instance
   * spends the same budget.
   */
  rateLimiterStore?: RateLimiterStore
  /**
   * The client address of a request, for the budgets kept per address (default: the socket's
   * remote address). Behind a reverse proxy every socket is the proxy's: return the address the
   * proxy wrote (`request => request.header('x-real-ip') ?? undefined`), and only for a header
   * that proxy always sets, since a client can send any header. Undefined falls back to the socket's.
   */
  clientAddress?: (request: ClientRequest) => string | undefined
  /**
   * Sessions shared between instances of this listener (default none): every session is recorded
   * in the cluster, a request for a session another instance holds is forwarded to it, and the
   * session of an instance that is gone is taken over (with its saved state; its streams resume
   * from the shared `eventStore`). `redisScaleOut(url).http` from `rxmcp/transports/redis` gives
   * this and the Redis event store together.
   */
  cluster?: SessionCluster
}

/** DEFAULTS of {@link StreamableHttpOptions}: every limit of the HTTP listener (README, "Limits"). */
export const STREAMABLE_HTTP_DEFAULTS = {
  host: '127.0.0.1', path: '/mcp', legacySsePath: '/sse', legacyMessagesPath: '/messages',
  sessionIdleTimeout: 30 * 60_000,
  /** @deprecated The former name of `sessionIdleTimeout`. */
  sessionTtlMs: 30 * 60_000,
  maxSessions: 10_000, maxSessionsPerClient: 100, sessionEvictionMinIdle: 60_000,
  maxExchanges: 10_000, maxExchangesPerClient: 100,
  /** When `auth` is set: failed authentications per client address. */
  failedAuthLimit: DEFAULT_FAILED_AUTH_LIMIT,
  maxBodyBytes: DEFAULT_MAX_MESSAGE_SIZE, bodyTimeoutMs: 30_000,
  streamHighWaterMark: 1024 * 1024, maxStreamsPerSession: 100,
  retryMs: 1000, keepAliveMs: 15_000, strictProtocolVersion: false,
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
  /** Sessions open now (Streamable HTTP and legacy SSE); modern-era requests have none. */
  readonly sessionCount: number
  /**
   * Where this listener's `rateLimit` and `failedAuthLimit` buckets live: the `rateLimiterStore`
   * option, else the memory store the listener made. Give it to a WebSocket listener on the same
   * port (`websocket({ rateLimit, rateLimiterStore: http.rateLimiterStore })`) and a client
   * spends one budget on both, not one on each.
   */
  readonly rateLimiterStore: RateLimiterStore
  close(): Promise<void>
}

/** Makes a {@link StreamableHttpServer}. */
export function streamableHttp(options: StreamableHttpOptions = {}): StreamableHttpServer {
  return new HttpTransportServer(options)
}

class HttpTransportServer implements StreamableHttpServer {
  readonly #options: StreamableHttpOptions
  readonly #connections = new Subject<Transport>()
  readonly connections: Observable<Transport> = this.#connections.asObservable()
  /** Every session, Streamable HTTP and legacy, least recently active first (touching moves one to the end). */
  readonly #sessions = new Map<string, AnySession>()
  /** Modern-era requests being answered (for keep-alives on their streams and for close). */
  readonly #exchanges = new Set<ModernExchange>()
  /** Sessionless requests held open (modern-era, stateless), per client and in total. */
  readonly #held: ConcurrencyBudget
  /**
   * The rule admitting a new session (`maxSessionsPerClient`, then `maxSessions`), counting the
   * sessions each client made (not those taken over from another instance: their client is not known here).
   */
  readonly #admission: SessionAdmission<AnySession>
  readonly #config: SessionConfig
  readonly #path: string
  readonly #versions: readonly string[]
  /** The modern ones among them (a legacy-only list still answers a modern POST as 2026-07-28 does). */
  readonly #modernVersions: readonly string[]
  readonly #now: () => number
  readonly #idleTimeout: number
  /** Authentication, scopes and request budgets (the `auth` and `rateLimit` options). */
  readonly #guard: HttpGuard
  /** Where the guard's budgets live (the option, else a memory store of this listener's own). */
  readonly #rateLimiterStore: RateLimiterStore
  #http: HttpServer | undefined
  #url: string | undefined
  /** Sweeps idle sessions and sends keep-alives; unref'd so it never holds the process open. */
  #timer: ReturnType<typeof setInterval> | undefined
  /** The same, on an injected scheduler. */
  #sweeping: Subscription | undefined
  #lastKeepAlive: number
  #isClosed = false
  /** Set in cluster mode: the sessions' records, and the routing of requests between instances. */
  readonly #shared: SharedSessions | undefined

  constructor(options: StreamableHttpOptions) {
    this.#options = options
    const scheduler = options.scheduler
    this.#now = scheduler === undefined ? Date.now : () => scheduler.now()
    this.#rateLimiterStore = options.rateLimiterStore ?? createMemoryRateLimiterStore()
    this.#guard = new HttpGuard({
      auth: options.auth, rateLimit: options.rateLimit, failedAuthLimit: options.failedAuthLimit,
      rateLimiterStore: this.#rateLimiterStore, clientAddress: options.clientAddress, now: this.#now,
    })
    this.#held = new ConcurrencyBudget(
      options.maxExchangesPerClient ?? STREAMABLE_HTTP_DEFAULTS.maxExchangesPerClient,
      options.maxExchanges ?? STREAMABLE_HTTP_DEFAULTS.maxExchanges,
    )
    this.#admission = new SessionAdmission<AnySession>({
      perClient: options.maxSessionsPerClient ?? STREAMABLE_HTTP_DEFAULTS.maxSessionsPerClient,
      total: options.maxSessions ?? STREAMABLE_HTTP_DEFAULTS.maxSessions,
      minIdle: options.sessionEvictionMinIdle ?? STREAMABLE_HTTP_DEFAULTS.sessionEvictionMinIdle,
    }, session => session.end())
    this.#lastKeepAlive = this.#now()
    const eventStore = options.eventStore === false ? undefined : options.eventStore ?? createMemoryEventStore()
    // Stream ids: a random prefix per listener and a counter, so no id says which session it is of.
    const streamPrefix = randomId(6)
    let streamCount = 0
    this.#config = {
      eventStore,
      retryMs: options.retryMs ?? STREAMABLE_HTTP_DEFAULTS.retryMs,
      highWaterMark: options.streamHighWaterMark ?? STREAMABLE_HTTP_DEFAULTS.streamHighWaterMark,
      maxStreams: options.maxStreamsPerSession ?? STREAMABLE_HTTP_DEFAULTS.maxStreamsPerSession,
      nextStreamId: () => `${streamPrefix}${(++streamCount).toString(36)}`,
      ...(options.cluster === undefined ? {} : { cluster: options.cluster }),
    }
    this.#path = options.path ?? STREAMABLE_HTTP_DEFAULTS.path
    this.#versions = options.protocolVersions ?? ALL_VERSIONS
    const modern = this.#versions.filter(isModernVersion)
    this.#modernVersions = modern.length > 0 ? modern : MODERN_PROTOCOL_VERSIONS
    this.nodeHandler = this.nodeHandler.bind(this)
    const ttl = options.sessionIdleTimeout ?? options.sessionTtlMs ?? STREAMABLE_HTTP_DEFAULTS.sessionIdleTimeout
    this.#idleTimeout = ttl
    this.#shared = options.cluster === undefined ? undefined : new SharedSessions(options.cluster, {
      sessions: this.#sessions,
      config: this.#config,
      now: this.#now,
      isClosed: () => this.#isClosed,
      open: session => { this.#register(session); this.#connections.next(session) },
      serve: exchange => this.#serveForwarded(exchange),
      body: exchange => this.#body(exchange),
      clientAddress: exchange => this.#guard.clientAddress(exchange),
      onEnd: this.#onEnd,
    }, ttl)
    const keepAlive = options.keepAliveMs ?? STREAMABLE_HTTP_DEFAULTS.keepAliveMs
    const tick = Math.max(50, Math.min(ttl / 4, keepAlive > 0 ? keepAlive : Infinity, 60_000))
    const sweep = () => this.#sweep(keepAlive)
    if (scheduler === undefined) {
      this.#timer = setInterval(sweep, tick)
      // Node's timers can be unref'd; a browser's or a worker's are plain numbers.
      ;(this.#timer as { unref?: () => void }).unref?.()
    } else {
      this.#sweeping = scheduler.schedule(function (this: SchedulerAction<unknown>) { sweep(); this.schedule(undefined, tick) }, tick)
    }
  }

  get url(): string | undefined { return this.#url }
  get httpServer(): HttpServer | undefined { return this.#http }
  get sessionCount(): number { return this.#sessions.size }
  get rateLimiterStore(): RateLimiterStore { return this.#rateLimiterStore }

  async start(): Promise<void> {
    if (this.#http !== undefined) return
    const host = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    // node:http loads here, so the web-standard handler (`handle(Request)`) runs where it does not exist.
    // The specifier is held in a variable so that bundlers leave node:http out of browser bundles.
    const { createServer: createHttpServer } = await import(/* @vite-ignore */ NODE_HTTP) as typeof import('node:http')
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
    // A shared session outlives this instance: another takes it over, with its record and events.
    const handOver = this.#shared !== undefined
    for (const session of [...this.#sessions.values()]) session.end(handOver)
    this.#sessions.clear()
    this.#shared?.close()
    for (const exchange of [...this.#exchanges]) void exchange.close()
    this.#exchanges.clear()
    this.#connections.complete()
    if (this.#http !== undefined) await closeServer(this.#http)
  }

  #sweep(keepAlive: number): void {
    const now = this.#now()
    // Least recently active first: the first session still within its idle time ends the sweep.
    // An open stream does not count as activity, so a client that only listens cannot pin a slot.
    for (const session of this.#sessions.values()) {
      if (now - session.lastSeen <= this.#idleTimeout) break
      // A request still running (a long tool call) is the client waiting, not gone: as on WebSocket.
      if (!session.hasRequestInFlight()) session.end()
      else this.#shared?.touch(session, now)
    }
    if (keepAlive > 0 && now - this.#lastKeepAlive >= keepAlive) {
      this.#lastKeepAlive = now
      for (const session of this.#sessions.values()) session.keepAlive()
      for (const exchange of this.#exchanges) exchange.keepAlive()
    }
  }

  /** Marks a session active now: it moves to the end of the recency order. */
  #touch(session: AnySession): void {
    session.lastSeen = this.#now()
    this.#sessions.delete(session.id)
    this.#sessions.set(session.id, session)
    this.#shared?.touch(session, session.lastSeen)
  }

  /** An exchange another instance forwarded: served as if it came here (its front checked origin and credentials). */
  async #serveForwarded(exchange: Exchange): Promise<void> {
    // The front ends the client's stream at its token's expiry too; this ends the owner's side with it.
    exchange = endStreamsAtExpiry(exchange, this.#options.scheduler ?? asyncScheduler)
    if (exchange.pathname === this.#path) return this.#handleMcp(exchange)
    if (exchange.pathname === (this.#options.legacyMessagesPath ?? STREAMABLE_HTTP_DEFAULTS.legacyMessagesPath) && exchange.method === 'POST') return this.#postLegacy(exchange)
    exchange.reply(404, { 'content-type': 'text/plain' }, 'Not Found')
  }

  /**
   * Room for one more session of the exchange's client, whose key it returns (`client` undefined
   * when the client cannot be told apart: then only the listener's cap applies). First the client's
   * own share (`maxSessionsPerClient`): at it, the client's least recently active session with no
   * request in flight is evicted once idle `sessionEvictionMinIdle` (a client may give up its own
   * stale session, never another's), else 429. Then the listener's (`maxSessions`): at it, the least
   * recently active session with no request in flight is evicted once idle `sessionEvictionMinIdle`,
   * else 503. A refusal carries Retry-After (when that session becomes evictable), answers
   * `answers`, and returns undefined.
   */
  #admit(exchange: Exchange, answers: RefusedIds = null): { client: string | undefined } | undefined {
    // Undefined for a client that cannot be told apart (no principal, no address): the total only.
    const client = this.#guard.clientKey(exchange)
    // The table is least recently active first (see #touch): the first idle session is the stalest.
    const refusal = this.#admission.admit(client, this.#sessions.values(), this.#sessions.size, true, this.#now())
    if (refusal === undefined) return { client }
    const retry = { 'retry-after': String(retryAfterSeconds(refusal.retryAfterMs)) }
    if (refusal.reason === 'client') replyError(exchange, 429, ErrorCode.RateLimited, 'Too Many Requests: too many sessions of this client', retry, answers)
    else replyError(exchange, 503, -32000, 'Service Unavailable: too many sessions', retry, answers)
    return undefined
  }

  /**
   * Holds one sessionless request of `client` open (modern-era, stateless): true, or false once
   * refused, 429 past the client's `maxExchangesPerClient`, 503 past the listener's `maxExchanges`,
   * with Retry-After and an error per request of `answers`. Give it back with `#held.release(client)`.
   */
  #hold(exchange: Exchange, client: string | undefined, answers: RefusedIds): boolean {
    const refusal = this.#held.acquire(client)
    if (refusal === undefined) return true
    // One of the client's own requests (or anyone's) ending makes room: that is no time we can know.
    const retry = { 'retry-after': '1' }
    if (refusal === 'client') replyError(exchange, 429, ErrorCode.RateLimited, 'Too Many Requests: too many requests of this client in progress', retry, answers)
    else replyError(exchange, 503, -32000, 'Service Unavailable: too many requests in progress', retry, answers)
    return false
  }

  /**
   * Forgets a session that ended. One function for every session: a closure made in a request's
   * handler would keep that request's objects alive as long as the session.
   */
  readonly #onEnd = (session: AnySession) => {
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id)
    this.#admission.delete(session)
    this.#shared?.ended(session)
  }

  /** Adds a session to the table, and to its client's (`client`; none for a session taken over from another instance, or of a client not told apart). */
  #register<S extends AnySession>(session: S, client?: string): S {
    this.#sessions.set(session.id, session)
    this.#admission.add(client, session)
    return session
  }

  /** A fresh session id, or undefined (answered 500) when the generator repeats one in use. */
  #newSessionId(exchange: Exchange, answers: RefusedIds = null): string | undefined {
    const id = (this.#options.sessionIdGenerator ?? defaultSessionId)()
    if (!this.#sessions.has(id)) return id
    replyError(exchange, 500, -32603, 'Internal error: the session id generator repeated an id in use', undefined, answers)
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
      // The Mcp-Param-* names a tool defines cannot be listed ahead: the ones asked for are allowed.
      const asked = exchange.header('access-control-request-headers')
      const allowed = 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name'
      return exchange.reply(204, { 'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS', 'access-control-allow-headers': asked === null ? allowed : `${allowed}, ${asked}`, 'access-control-max-age': '600' })
    }
    const legacySse = this.#options.legacySsePath === false ? undefined : this.#options.legacySsePath ?? STREAMABLE_HTTP_DEFAULTS.legacySsePath
    const legacyMessages = this.#options.legacyMessagesPath ?? STREAMABLE_HTTP_DEFAULTS.legacyMessagesPath
    const path = exchange.pathname
    const isGuarded = path === this.#path || (legacySse !== undefined && (path === legacySse || path === legacyMessages))
    if (!(await this.#guard.admit(exchange, isGuarded))) return
    // A stream this request opens ends when its token expires: the client comes back with a fresh one.
    exchange = endStreamsAtExpiry(exchange, this.#options.scheduler ?? asyncScheduler)
    if (this.#shared !== undefined && isGuarded) {
      // A session held by another instance: the request goes there.
      const sessionId = path === this.#path ? exchange.header('mcp-session-id') : path === legacyMessages ? new URLSearchParams(exchange.search).get('sessionId') : null
      if (sessionId !== null) {
        const routed = await this.#shared.route(exchange, sessionId)
        if (routed === undefined) return
        exchange = routed
      }
    }
    if (path === this.#path) return this.#handleMcp(exchange)
    if (legacySse !== undefined && path === legacySse && exchange.method === 'GET') return this.#openLegacy(exchange, legacyMessages)
    if (legacySse !== undefined && path === legacyMessages && exchange.method === 'POST') return this.#postLegacy(exchange)
    exchange.reply(404, { 'content-type': 'text/plain' }, 'Not Found')
  }

  #checkOrigin(exchange: Exchange): boolean {
    // DNS-rebinding protection: a page on a foreign origin must not reach a local server.
    const origin = exchange.header('origin')
    if (origin !== null && !isAllowedOrigin(origin, this.#options.allowedOrigins)) { replyError(exchange, 403, -32000, 'Forbidden: origin not allowed'); return false }
    if (!isAllowedHost(exchange.header('host'), this.#options.allowedHosts, this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host)) {
      replyError(exchange, 403, -32000, 'Forbidden: host not allowed')
      return false
    }
    return true
  }

  #corsHeaders(origin: string | undefined): Record<string, string> {
    const origins = this.#options.corsOrigins
    if (origins === undefined || origin === undefined) return {}
    if (!origins.includes('*') && !origins.includes(origin)) return {}
    return { 'access-control-allow-origin': origins.includes('*') ? '*' : origin, 'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate', vary: 'origin' }
  }

  async #handleMcp(exchange: Exchange): Promise<void> {
    // A POST checks the version once its body is read, so that its error can carry the request's id.
    if (exchange.method !== 'POST' && !this.#isVersionSupported(exchange)) return this.#refuseVersion(exchange, null)
    switch (exchange.method) {
      case 'POST': return this.#post(exchange)
      case 'GET': return this.#get(exchange)
      case 'DELETE': return this.#delete(exchange)
      default: return exchange.reply(405, { allow: 'GET, POST, DELETE, OPTIONS', 'content-type': 'text/plain' }, 'Method Not Allowed')
    }
  }

  /** MCP 2025-06-18 transports: an unsupported MCP-Protocol-Version is answered 400. */
  #isVersionSupported(exchange: Exchange): boolean {
    const version = exchange.header('mcp-protocol-version')
    return version === null || this.#versions.includes(version)
  }

  #refuseVersion(exchange: Exchange, answers: RefusedIds): void {
    replyError(exchange, 400, -32000, `Bad Request: unsupported protocol version ${exchange.header('mcp-protocol-version')}`, undefined, answers)
  }

  /**
   * The session a request names, or undefined once refused. `answers` names the requests a POST
   * carried, so that the refusal answers them (null for a GET or DELETE).
   */
  #session(exchange: Exchange, answers: RefusedIds = null): HttpSession | undefined {
    const id = exchange.header('mcp-session-id')
    if (id === null) { replyError(exchange, 400, -32000, 'Bad Request: Mcp-Session-Id header is required', undefined, answers); return undefined }
    const session = this.#sessions.get(id)
    // Unknown and expired look the same, so a guessed id learns nothing.
    // A session belongs to the principal that made it; to anyone else it does not exist.
    if (!(session instanceof HttpSession) || !this.#guard.owns(session.principalKey, exchange)) {
      replyError(exchange, 404, -32001, 'Session not found', undefined, answers)
      return undefined
    }
    // MCP 2025-06-18 transports: the client SHOULD send the negotiated version (an unsupported one was
    // refused above); another supported one is refused only when asked to be strict.
    const version = exchange.header('mcp-protocol-version')
    const isStrict = this.#options.strictProtocolVersion ?? STREAMABLE_HTTP_DEFAULTS.strictProtocolVersion
    if (isStrict && version !== null && session.protocolVersion !== undefined && version !== session.protocolVersion) {
      replyError(exchange, 400, -32000, `Bad Request: MCP-Protocol-Version ${version} is not the session's ${session.protocolVersion}`, undefined, answers)
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
    if (result.type === 'gone') return undefined
    const [status, message] = result.type === 'too-large' ? [413, 'Payload Too Large'] : [408, 'Request Timeout: the body did not arrive in time']
    exchange.refuse(status, JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }))
    return undefined
  }

  async #post(exchange: Exchange): Promise<void> {
    const accept = exchange.header('accept') ?? ''
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return replyError(exchange, 406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream')
    }
    if (!isJsonContentType(exchange)) return replyError(exchange, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json')
    const body = await this.#body(exchange)
    if (body === undefined) return
    const decoded = decodeJsonFrame(body, Infinity, this.#options.structureLimits)
    // A body refused for its depth or members is answered with the id the codec read, when it read one.
    if (decoded.type === 'invalid') return replyError(exchange, 400, -32700, decoded.error.message, undefined, decoded.error instanceof StructureLimitError ? decoded.error.id ?? null : null)
    const payload = decoded.message
    const { ids, isInitialize, cancelled, hasBadId } = requestsOf(payload)
    // 1e400 parses to Infinity, which no answer could carry back (JSON writes it as null).
    if (hasBadId) return replyError(exchange, 400, -32600, 'Invalid Request: an id must be a string or a finite number')
    // JSON-RPC 2.0 §5: an error about a request carries its id whenever the request had one; a
    // refused batch is answered with one error per request it held (null when it held none).
    const answers: RefusedIds = Array.isArray(payload) ? ids : (ids[0] ?? null)
    if (!this.#guard.authorize(exchange, payload)) return
    // Answered synchronously unless the budget is shared (Redis): no await per request without one.
    const isWithin = this.#guard.withinBudget(exchange, ids.length, answers)
    if (isWithin === false || (isWithin !== true && !(await isWithin))) return
    if (isModernPost(exchange, payload)) return this.#postModern(exchange, payload)
    if (!this.#isVersionSupported(exchange)) return this.#refuseVersion(exchange, answers)
    if (this.#options.stateless) return this.#postStateless(exchange, payload, ids, answers)
    let session: HttpSession
    if (isInitialize) {
      if (Array.isArray(payload) && payload.length > 1) return replyError(exchange, 400, -32600, 'Invalid Request: initialize must be sent alone', undefined, answers)
      const admitted = this.#admit(exchange, answers)
      if (admitted === undefined) return
      const id = this.#newSessionId(exchange, answers)
      if (id === undefined) return
      session = this.#register(new HttpSession(id, this.#config, this.#now(), this.#onEnd), admitted.client)
      session.principalKey = principalKey(exchange.principal)
      session.initializeRequestId = ids[0]
      session.remoteAddress = this.#guard.clientAddress(exchange)
      if (this.#shared !== undefined) await this.#shared.claim(session, 'streamable-http')
      this.#connections.next(session)
    } else {
      const found = this.#session(exchange, answers)
      if (found === undefined) return
      session = found
    }
    const headers = { 'mcp-session-id': session.id }
    // MCP basic: a request id is not reused in a session. Refused here, before the connection sees it,
    // since its answer would otherwise take the first request's place on the first POST.
    const reused = ids.find(id => session.isInFlight(id))
    if (reused !== undefined) {
      return replyError(exchange, 400, -32600, `Invalid Request: request id ${JSON.stringify(reused)} is already in use`, headers, answers)
    }
    const frameErrorReply = (error: JsonRpcPayload) => exchange.reply(400, { ...headers, ...JSON_HEADERS }, JSON.stringify(error))
    // This POST, for `ctx.requestInfo` of each request it carries: its headers, made only when read.
    const info = requestInfo(session.kind, exchange.headerList(), isInitialize ? session.remoteAddress : this.#guard.clientAddress(exchange))
    if (ids.length === 0) {
      const error = session.receive(payload, exchange.principal, info)
      if (error !== undefined) return frameErrorReply(error)
      session.abandon(cancelled)
      return exchange.reply(202, headers)
    }
    if (this.#options.jsonResponse) {
      const answer = session.expectJson(ids, Array.isArray(payload))
      const error = session.receive(payload, exchange.principal, info)
      if (error !== undefined) { session.forget(ids); return frameErrorReply(error) }
      session.abandon(cancelled)
      const result = await answer
      // Every request of the POST was cancelled: nothing to answer with.
      return result === undefined ? exchange.reply(202, headers) : exchange.reply(200, { ...headers, ...JSON_HEADERS }, JSON.stringify(result))
    }
    const stream = session.openPostStream(ids, exchange.header('mcp-protocol-version') ?? undefined)
    if (stream === undefined) return replyError(exchange, 429, -32000, 'Too Many Requests: too many open streams in this session', headers, answers)
    const error = session.receive(payload, exchange.principal, info)
    // An error about the whole body (a batch where batches are not allowed): on this POST, as 400.
    if (error !== undefined) { session.drop(stream); return frameErrorReply(error) }
    session.abandon(cancelled)
    session.attach(stream, exchange)
  }

  /**
   * A modern-era POST (see isModernPost), checked by the rules of Streamable HTTP 2026-07-28 (see
   * refuseModernPost) and handed to the server as a one-exchange transport.
   */
  #postModern(exchange: Exchange, payload: unknown): void {
    const message = payload as Record<string, unknown>
    if (refuseModernPost(exchange, message, this.#modernVersions, this.#versions)) return
    // Held open until answered, for as long as a listen stream lasts: each counts against its client.
    const client = this.#guard.clientKey(exchange)
    if (!this.#hold(exchange, client, message.id as string | number)) return
    const transport = new ModernExchange(exchange, payload, this.#config.highWaterMark, this.#options.jsonResponse === true, this.#guard.clientAddress(exchange))
    this.#exchanges.add(transport)
    void transport.closed.then(() => { this.#exchanges.delete(transport); this.#held.release(client) })
    this.#connections.next(transport)
  }

  async #postStateless(exchange: Exchange, payload: unknown, requestIds: RequestId[], answers: RefusedIds): Promise<void> {
    // Requests are held open until answered: each POST of them counts against its client.
    const isHeld = requestIds.length > 0
    const client = this.#guard.clientKey(exchange)
    if (isHeld && !this.#hold(exchange, client, answers)) return
    const session = new HttpSession('', STATELESS_CONFIG, 0, () => {})
    session.isStateless = true
    // Per-client limits (the task quotas) count a stateless exchange by its address.
    session.remoteAddress = this.#guard.clientAddress(exchange)
    const info = requestInfo(session.kind, exchange.headerList(), session.remoteAddress)
    this.#connections.next(session)
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
      this.#held.release(client)
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

  async #openLegacy(exchange: Exchange, messagesPath: string): Promise<void> {
    const accept = exchange.header('accept') ?? ''
    if (!accept.includes('text/event-stream') && !accept.includes('*/*') && accept !== '') return replyError(exchange, 406, -32000, 'Not Acceptable')
    const admitted = this.#admit(exchange)
    if (admitted === undefined) return
    const id = this.#newSessionId(exchange)
    if (id === undefined) return
    const session = this.#register(new LegacySession(id, this.#now(), this.#onEnd), admitted.client)
    session.principalKey = principalKey(exchange.principal)
    if (this.#shared !== undefined) await this.#shared.claim(session, 'sse')
    session.attach(exchange, `${messagesPath}?sessionId=${encodeURIComponent(id)}`, this.#config.highWaterMark)
    session.remoteAddress = this.#guard.clientAddress(exchange)
    this.#connections.next(session)
  }

  async #postLegacy(exchange: Exchange): Promise<void> {
    const id = new URLSearchParams(exchange.search).get('sessionId')
    const session = id === null ? undefined : this.#sessions.get(id)
    if (!(session instanceof LegacySession) || !this.#guard.owns(session.principalKey, exchange)) {
      return exchange.reply(404, { 'content-type': 'text/plain' }, 'Session not found')
    }
    // A text/plain (or form) POST is a CORS simple request, sent cross-origin without a preflight.
    if (!isJsonContentType(exchange)) return replyError(exchange, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json')
    this.#touch(session)
    const body = await this.#body(exchange)
    if (body === undefined) return
    const decoded = decodeJsonFrame(body, Infinity, this.#options.structureLimits)
    if (decoded.type === 'message' && this.#guard.readsPayloads) {
      if (!this.#guard.authorize(exchange, decoded.message)) return
      const isWithin = this.#guard.withinBudget(exchange, requestsOf(decoded.message).ids.length, null)
      if (isWithin === false || (isWithin !== true && !(await isWithin))) return
    }
    session.receiveDecoded(decoded, exchange.principal, requestInfo(session.kind, exchange.headerList(), this.#guard.clientAddress(exchange)))
    exchange.reply(202, { 'content-type': 'text/plain' }, 'Accepted')
  }
}

/** Every revision the listener accepts by default, modern first. */
const ALL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS]

/** Imported only by start(); see there. */
const NODE_HTTP = 'node:http'

/**
 * True when the request's Content-Type is JSON: its media type (before any parameter) is exactly
 * application/json. A check for the substring would pass `text/plain; x=application/json`, which a
 * browser sends cross-origin without a CORS preflight, as it does text/plain and form bodies.
 */
function isJsonContentType(exchange: Exchange): boolean {
  const type = exchange.header('content-type')
  if (type === null) return false
  const semicolon = type.indexOf(';')
  return (semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase() === 'application/json'
}

function defaultSessionId(): string {
  // 256 bits from the platform's CSPRNG: unguessable, and URL- and header-safe.
  return randomId(32)
}

/** Stateless sessions keep no streams and no events. */
const STATELESS_CONFIG: SessionConfig = { eventStore: undefined, retryMs: 0, highWaterMark: 0, maxStreams: 0, nextStreamId: () => '' }
