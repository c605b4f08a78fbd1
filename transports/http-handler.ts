import type { Observable, Subscription } from '../lib/rx.ts'
import { DRAIN_DEFAULTS, type DrainOptions, type ReplyEnvelope, type Transport, type TransportGauge, type TransportServer } from '../lib/transport.ts'
import type { RateLimiterStore } from '../lib/token-bucket.ts'
import { corsHeaders, preflightHeaders } from '../lib/http/origin.ts'
import { HANDLER_CLOSED, NOT_FOUND } from '../lib/http/refusal.ts'
import { legacySessionIdOf, mcpRequest, routeForwarded, routeRequest, type HttpRoute } from '../lib/http/rules.ts'
import { JSON_HEADERS, answerRefusal, type Exchange } from './http-exchange.ts'
import { HttpSession } from './http-session.ts'
import { HttpListenerCore } from './http-listener.ts'
import { deleteSession, getStream, postMcp } from './http-session-routes.ts'
import { openLegacySse, postLegacySse } from './legacy-sse-routes.ts'
import { STREAMABLE_HTTP_DEFAULTS, type StreamableHttpOptions } from './streamable-http-options.ts'
import { endStreamsAtExpiry } from './token-expiry.ts'
import { after, every } from './timers.ts'
import { WebExchange, type StreamKeepAlive } from './web-exchange.ts'

/**
 * What a caller of {@link WebHandler.fetch} may add to the request: a body its framework already
 * read, and the client's address. Deno's `Deno.serve` handler info fits as it is (`remoteAddr`).
 */
export interface WebRequestInit {
  /**
   * The body, when something read it before (Hono's `c.req.json()`, a body parser): an object or
   * array as parsed JSON, a string as the JSON text, bytes as they came. It is checked like a body
   * read here (size, structure, JSON-RPC shape); undefined reads the request's own body.
   */
  body?: unknown
  /** The client's IP address, for budgets kept per address (`rateLimit`, `failedAuthLimit`). */
  remoteAddress?: string
  /** Deno's `ServeHandlerInfo.remoteAddr`: used when `remoteAddress` is absent. */
  remoteAddr?: { hostname?: string }
}

/**
 * The Streamable HTTP server (with legacy HTTP+SSE beside it) as a web-standard handler:
 * `fetch(Request) -> Promise<Response>`, SSE answers as `ReadableStream`s. It binds nothing and
 * imports nothing from `node:`, so it runs on Node, Deno, Bun, Cloudflare Workers and behind any
 * framework that hands over a `Request` (Hono). `McpServer.listen(handler)` serves it.
 *
 * `fetch` is bound: pass it as it is (`Deno.serve(handler.fetch)`, `export default { fetch: ... }`).
 */
export interface WebHandler extends TransportServer {
  /**
   * Answers one HTTP request: JSON, an SSE stream, 202, or the refusal the transport's rules give
   * (403 for a foreign Origin or Host, 404 for an unknown session, 413 for a body over the limit...).
   */
  readonly fetch: (request: Request, init?: WebRequestInit) => Promise<Response>
  /** Sessions open now (Streamable HTTP and legacy SSE); modern-era requests have none. */
  readonly sessionCount: number
  /** Where this handler's `rateLimit` and `failedAuthLimit` buckets live (see StreamableHttpOptions). */
  readonly rateLimiterStore: RateLimiterStore
  /** Ends every session and stream; a request after it is answered 503. */
  close(): Promise<void>
}

/**
 * The Streamable HTTP endpoint without a socket of its own: it reads a request (an {@link Exchange}
 * from any server underneath), asks the pure rules (lib/http/rules.ts) what to do, and acts. The
 * route handlers live by concern in http-session-routes.ts (POST, GET and DELETE of sessions),
 * http-modern-post.ts, http-stateless.ts and legacy-sse-routes.ts; the session table in
 * http-sessions.ts; what they share in http-listener.ts. The node:http listener
 * (streamable-http.ts) and the web handler (web.ts) are adapters over it.
 */
export class HttpHandler implements WebHandler {
  readonly #options: StreamableHttpOptions
  /** What every route shares: options, rules, sessions, exchanges, guard, cluster. */
  readonly #core: HttpListenerCore
  readonly connections: Observable<Transport>
  readonly requests: Observable<ReplyEnvelope>
  /** Sweeps idle sessions and sends keep-alives, on the scheduler option (else unref'd: it never holds the process open). */
  #sweeping: Subscription | undefined
  /** The keep-alive of the SSE streams `fetch` answers with: each runs its own timer (see WebExchange). */
  readonly #keepAlive: StreamKeepAlive

  constructor(options: StreamableHttpOptions) {
    this.#options = options
    this.#keepAlive = { ms: options.keepAliveMs ?? STREAMABLE_HTTP_DEFAULTS.keepAliveMs, scheduler: options.scheduler }
    const core = new HttpListenerCore(options, exchange => this.#serveForwarded(exchange))
    this.#core = core
    this.connections = core.connections.asObservable()
    this.requests = core.requests.asObservable()
  }

  get sessionCount(): number { return this.#core.sessions.size }
  get rateLimiterStore(): RateLimiterStore { return this.#core.rateLimiterStore }

  /** `rxmcp.sse.events.stored`, when the event store can count what it holds (the memory store). */
  gauges(): readonly TransportGauge[] {
    const store = this.#core.config.eventStore
    if (store?.eventCount === undefined) return []
    return [{ name: 'rxmcp.sse.events.stored', description: 'SSE events the Streamable HTTP listener\'s event store holds now, for clients to resume their streams.', unit: '{event}', read: () => store.eventCount!() }]
  }

  readonly fetch = (request: Request, init?: WebRequestInit): Promise<Response> => {
    const remoteAddress = init?.remoteAddress ?? init?.remoteAddr?.hostname
    const exchange = new WebExchange(request, this.extraHeaders(request.headers.get('origin') ?? undefined), init?.body, remoteAddress, this.#keepAlive)
    this.serve(exchange).catch(() => exchange.reply(500, {}))
    return exchange.response
  }

  /** The headers every answer to a request from `origin` carries (CORS, when `corsOrigins` is set). */
  extraHeaders(origin: string | undefined): Record<string, string> {
    return corsHeaders(this.#options.corsOrigins, origin)
  }

  /** Every request: the rules route it (403, preflight, a path), the guard admits it, then it is served. */
  async serve(exchange: Exchange): Promise<void> {
    const core = this.#core
    const healthPath = this.#options.healthPath ?? STREAMABLE_HTTP_DEFAULTS.healthPath
    // The balancer's check: before everything else (no Host, Origin or credentials asked), and only this.
    if (healthPath !== false && exchange.pathname === healthPath && (exchange.method === 'GET' || exchange.method === 'HEAD')) {
      const status = core.isClosed ? 'closed' : core.isUnhealthy ? 'draining' : 'serving'
      const body = status === 'serving' ? { status, sessions: core.sessions.size } : { status }
      return exchange.reply(status === 'serving' ? 200 : 503, { ...JSON_HEADERS, 'cache-control': 'no-store' }, JSON.stringify(body))
    }
    if (core.isClosed) return answerRefusal(exchange, HANDLER_CLOSED)
    return this.#arriving(exchange.header('mcp-session-id'), () => this.#serve(exchange))
  }

  /** Runs `serve` with the request counted as arriving for its session (see HttpListenerCore.arriving). */
  async #arriving(sessionId: string | null, serve: () => Promise<void> | void): Promise<void> {
    if (sessionId === null) return serve()
    const arriving = this.#core.arriving
    arriving.set(sessionId, (arriving.get(sessionId) ?? 0) + 1)
    try {
      await serve()
    } finally {
      const count = arriving.get(sessionId)! - 1
      if (count === 0) arriving.delete(sessionId)
      else arriving.set(sessionId, count)
    }
  }

  async #serve(exchange: Exchange): Promise<void> {
    const core = this.#core
    // Timers start with the first request, not at construction: Cloudflare Workers refuse timers
    // (and random numbers) in a module's global scope, where a handler is often made.
    this.#sweeping ??= this.#sweep()
    const route = routeRequest(core.rules, exchange.method, exchange.pathname, exchange.header('origin'), exchange.header('host'))
    if (route.type === 'refuse') return answerRefusal(exchange, route)
    if (route.type === 'preflight') return exchange.reply(204, preflightHeaders(exchange.header('access-control-request-headers')))
    const admitted = core.guard.admit(exchange, route.isGuarded)
    if (admitted !== true && !(await admitted)) return
    // A stream this request opens ends when its token expires: the client comes back with a fresh one.
    exchange = endStreamsAtExpiry(exchange, core.scheduler)
    if (core.shared !== undefined && route.isGuarded) {
      // A session held by another instance: the request goes there.
      const sessionId = route.sessionIdIn === 'header' ? exchange.header('mcp-session-id') : route.sessionIdIn === 'query' ? legacySessionIdOf(exchange.search) : null
      if (sessionId !== null) {
        const routed = await core.shared.route(exchange, sessionId)
        if (routed === undefined) return
        exchange = routed
      }
    }
    return this.#route(route, exchange)
  }

  /** Starts the sweep of idle sessions and keep-alives (once; the first request or `start` does). */
  #sweep(): Subscription {
    const options = this.#options
    const ttl = options.sessionIdleTimeout ?? options.sessionTtlMs ?? STREAMABLE_HTTP_DEFAULTS.sessionIdleTimeout
    const keepAlive = this.#keepAlive.ms
    const tick = Math.max(50, Math.min(ttl / 4, keepAlive > 0 ? keepAlive : Infinity, 60_000))
    const core = this.#core
    return every(tick, options.scheduler, () => core.sessions.sweep(keepAlive, core.exchanges))
  }

  /** Starts the sweep now (the node:http listener does when it binds; a web handler waits for a request). */
  startSweeping(): void {
    this.#sweeping ??= this.#sweep()
  }

  /** An exchange another instance forwarded: served as if it came here (its front checked origin and credentials). */
  async #serveForwarded(exchange: Exchange): Promise<void> {
    // The front ends the client's stream at its token's expiry too; this ends the owner's side with it.
    exchange = endStreamsAtExpiry(exchange, this.#core.scheduler)
    return this.#arriving(exchange.header('mcp-session-id'), () => this.#route(routeForwarded(this.#core.rules, exchange.method, exchange.pathname), exchange))
  }

  #route(route: HttpRoute, exchange: Exchange): Promise<void> | void {
    const core = this.#core
    switch (route.type) {
      case 'mcp': {
        const action = mcpRequest(core.rules, exchange.method, exchange.header('mcp-protocol-version'), exchange.header('accept'), exchange.header('content-type'))
        switch (action.type) {
          case 'refuse': return answerRefusal(exchange, action)
          case 'post': return postMcp(core, exchange)
          case 'get-stream': return getStream(core, exchange)
          case 'delete-session': return deleteSession(core, exchange)
        }
        return
      }
      case 'legacy-sse-open': return openLegacySse(core, exchange)
      case 'legacy-sse-message': return postLegacySse(core, exchange)
      default: return answerRefusal(exchange, NOT_FOUND)
    }
  }

  /**
   * Leaves gracefully (see TransportServer.drain):
   *
   * ```
   * health 503 ──healthGraceMs──▶ no new session (initialize, legacy SSE: 503 + Retry-After)
   *   each session, once it has no request in flight (or at timeoutMs):
   *     shared (cluster): handed over (record names a gone owner; streams end, the client resumes elsewhere)
   *     otherwise:        ended
   *   sessionless requests and relayed POSTs finish (up to timeoutMs) ──▶ answers flushed ──▶ close
   * ```
   */
  drain(options: DrainOptions = {}): Promise<void> {
    return this.#draining ??= this.#drain(options)
  }
  #draining: Promise<void> | undefined

  async #drain(options: DrainOptions): Promise<void> {
    const core = this.#core
    if (core.isClosed) return
    const timeoutMs = options.timeoutMs ?? DRAIN_DEFAULTS.timeoutMs
    const graceMs = options.healthGraceMs ?? DRAIN_DEFAULTS.healthGraceMs
    core.isUnhealthy = true
    options.onProgress?.('health check failing')
    if (graceMs > 0) await this.#wait(graceMs)
    core.isDraining = true
    await core.shared?.leave()
    options.onProgress?.('taking no new sessions')
    const deadline = core.now() + timeoutMs
    // Each session is left as soon as it has nothing running: polled (bounded by the deadline),
    // since a request ends deep inside the session and the server.
    let handedOver = 0
    const leaving: Promise<void>[] = []
    let isLate = false
    for (;;) {
      isLate = core.now() >= deadline
      for (const session of [...core.sessions.sessions.values()]) {
        if (!isLate && (session.hasRequestInFlight() || core.arriving.has(session.id))) continue
        if (session instanceof HttpSession && session.shared !== undefined && core.shared !== undefined) {
          core.sessions.sessions.delete(session.id)
          leaving.push(core.shared.handOver(session))
          handedOver++
        } else session.end()
      }
      const isIdle = core.sessions.size === 0 && core.exchanges.size === 0 && (core.shared?.waitingRelays ?? 0) === 0
      if (isIdle || isLate) break
      await this.#wait(DRAIN_POLL_MS)
    }
    await Promise.all(leaving)
    options.onProgress?.(`sessions handed over: ${handedOver}`)
    await core.shared?.flush()
    // Nothing was cut short: what this instance did not answer it never ran (fronts route it again).
    if (!isLate) await core.shared?.markLeft()
    await this.close()
  }

  /** Resolves after `ms` on the listener's scheduler. */
  #wait(ms: number): Promise<void> {
    return new Promise(resolve => { after(ms, this.#options.scheduler, resolve) })
  }

  async close(): Promise<void> {
    const core = this.#core
    if (core.isClosed) return
    core.isClosed = true
    this.#sweeping?.unsubscribe()
    // A shared session outlives this instance: another takes it over, with its record and events.
    core.sessions.endAll(core.shared !== undefined)
    core.shared?.close()
    for (const exchange of [...core.exchanges]) void exchange.close()
    core.exchanges.clear()
    core.connections.complete()
    core.requests.complete()
  }
}

/** How often a drain looks again for sessions with nothing in flight. */
const DRAIN_POLL_MS = 20

/**
 * Makes a {@link WebHandler}: the Streamable HTTP endpoint (both eras, with legacy HTTP+SSE beside
 * it) as `fetch(Request) -> Promise<Response>`. Every option of the node:http listener applies
 * except `port` (nothing binds); `host` still names what the Host check treats as this server
 * (127.0.0.1 by default: only loopback names pass unless `allowedHosts` lists yours).
 * @example
 * const mcp = webHandler({ allowedHosts: ['mcp.example.com'] })
 * await server.listen(mcp)
 * Deno.serve({ port: 3000 }, mcp.fetch)
 */
export function webHandler(options: StreamableHttpOptions = {}): WebHandler {
  return new HttpHandler(options)
}
