import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http'
import type { Observable, Subscription } from '../lib/rx.ts'
import type { ReplyEnvelope, Transport } from '../lib/transport.ts'
import type { RateLimiterStore } from '../lib/token-bucket.ts'
import { corsHeaders, preflightHeaders } from '../lib/http/origin.ts'
import { NOT_FOUND } from '../lib/http/refusal.ts'
import { legacySessionIdOf, mcpRequest, routeForwarded, routeRequest, type HttpRoute } from '../lib/http/rules.ts'
import { closeServer, listenOn, urlHost } from './listen.ts'
import { NodeExchange, WebExchange, answerRefusal, type Exchange } from './http-exchange.ts'
import { HttpListenerCore } from './http-listener.ts'
import { deleteSession, getStream, postMcp } from './http-session-routes.ts'
import { openLegacySse, postLegacySse } from './legacy-sse-routes.ts'
import { STREAMABLE_HTTP_DEFAULTS, type StreamableHttpOptions, type StreamableHttpServer } from './streamable-http-options.ts'
import { endStreamsAtExpiry } from './token-expiry.ts'
import { every } from './timers.ts'

export { STREAMABLE_HTTP_DEFAULTS } from './streamable-http-options.ts'
export type { StreamableHttpOptions, StreamableHttpServer } from './streamable-http-options.ts'
export { memoryRateLimiterStore, createMemoryRateLimiterStore } from '../lib/token-bucket.ts'
export type { RateLimiter, RateLimiterStore } from '../lib/token-bucket.ts'
export type { ClientRequest } from './client-policy.ts'

/** Makes a {@link StreamableHttpServer}. */
export function streamableHttp(options: StreamableHttpOptions = {}): StreamableHttpServer {
  return new HttpTransportServer(options)
}

/**
 * The listener: a thin adapter that reads a request, asks the pure rules (lib/http/rules.ts) what
 * to do, and acts: the handlers live by concern in http-session-routes.ts (POST, GET and DELETE of
 * sessions), http-modern-post.ts, http-stateless.ts and legacy-sse-routes.ts; the session table in
 * http-sessions.ts; what they share in http-listener.ts.
 */
class HttpTransportServer implements StreamableHttpServer {
  readonly #options: StreamableHttpOptions
  /** What every handler shares: options, rules, sessions, exchanges, guard, cluster. */
  readonly #core: HttpListenerCore
  readonly connections: Observable<Transport>
  readonly requests: Observable<ReplyEnvelope>
  #http: HttpServer | undefined
  #url: string | undefined
  /** Sweeps idle sessions and sends keep-alives, on the scheduler option (else unref'd: it never holds the process open). */
  readonly #sweeping: Subscription

  constructor(options: StreamableHttpOptions) {
    this.#options = options
    const core = new HttpListenerCore(options, exchange => this.#serveForwarded(exchange))
    this.#core = core
    this.connections = core.connections.asObservable()
    this.requests = core.requests.asObservable()
    this.nodeHandler = this.nodeHandler.bind(this)
    const ttl = options.sessionIdleTimeout ?? options.sessionTtlMs ?? STREAMABLE_HTTP_DEFAULTS.sessionIdleTimeout
    const keepAlive = options.keepAliveMs ?? STREAMABLE_HTTP_DEFAULTS.keepAliveMs
    const tick = Math.max(50, Math.min(ttl / 4, keepAlive > 0 ? keepAlive : Infinity, 60_000))
    const sweep = () => core.sessions.sweep(keepAlive, core.exchanges)
    this.#sweeping = every(tick, options.scheduler, sweep)
  }

  get url(): string | undefined { return this.#url }
  get httpServer(): HttpServer | undefined { return this.#http }
  get sessionCount(): number { return this.#core.sessions.size }
  get rateLimiterStore(): RateLimiterStore { return this.#core.rateLimiterStore }

  async start(): Promise<void> {
    if (this.#http !== undefined) return
    const host = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    // node:http loads here, so the web-standard handler (`handle(Request)`) runs where it does not exist.
    // The specifier is held in a variable so that bundlers leave node:http out of browser bundles.
    const { createServer: createHttpServer } = await import(/* @vite-ignore */ NODE_HTTP) as typeof import('node:http')
    const http = createHttpServer({ noDelay: true, keepAliveTimeout: 30_000 }, this.nodeHandler)
    this.#http = http
    const port = await listenOn(http, this.#options.port ?? 0, host)
    this.#url = `http://${urlHost(host)}:${port}${this.#core.rules.path}`
  }

  async close(): Promise<void> {
    const core = this.#core
    if (core.isClosed) return
    core.isClosed = true
    this.#sweeping.unsubscribe()
    // A shared session outlives this instance: another takes it over, with its record and events.
    core.sessions.endAll(core.shared !== undefined)
    core.shared?.close()
    for (const exchange of [...core.exchanges]) void exchange.close()
    core.exchanges.clear()
    core.connections.complete()
    core.requests.complete()
    if (this.#http !== undefined) await closeServer(this.#http)
  }

  nodeHandler(req: IncomingMessage, res: ServerResponse): void {
    const exchange = new NodeExchange(req, res, corsHeaders(this.#options.corsOrigins, req.headers.origin))
    this.#dispatch(exchange).catch(error => {
      if (!res.headersSent) { res.statusCode = 500; res.end() } else res.destroy(error instanceof Error ? error : undefined)
    })
  }

  async handle(request: Request): Promise<Response> {
    const exchange = new WebExchange(request, corsHeaders(this.#options.corsOrigins, request.headers.get('origin') ?? undefined))
    this.#dispatch(exchange).catch(() => exchange.reply(500, {}))
    return exchange.response
  }

  /** Every request: the rules route it (403, preflight, a path), the guard admits it, then it is served. */
  async #dispatch(exchange: Exchange): Promise<void> {
    const core = this.#core
    const route = routeRequest(core.rules, exchange.method, exchange.pathname, exchange.header('origin'), exchange.header('host'))
    if (route.type === 'refuse') return answerRefusal(exchange, route)
    if (route.type === 'preflight') return exchange.reply(204, preflightHeaders(exchange.header('access-control-request-headers')))
    if (!(await core.guard.admit(exchange, route.isGuarded))) return
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
    return this.#serve(route, exchange)
  }

  /** An exchange another instance forwarded: served as if it came here (its front checked origin and credentials). */
  #serveForwarded(exchange: Exchange): Promise<void> {
    // The front ends the client's stream at its token's expiry too; this ends the owner's side with it.
    exchange = endStreamsAtExpiry(exchange, this.#core.scheduler)
    return this.#serve(routeForwarded(this.#core.rules, exchange.method, exchange.pathname), exchange)
  }

  async #serve(route: HttpRoute, exchange: Exchange): Promise<void> {
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
}

/** Imported only by start(); see there. */
const NODE_HTTP = 'node:http'
