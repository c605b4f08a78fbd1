import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http'
import type { Observable } from '../lib/rx.ts'
import type { DrainOptions, ReplyEnvelope, Transport, TransportGauge } from '../lib/transport.ts'
import type { TransportServer } from '../lib/transport.ts'
import type { RateLimiterStore } from '../lib/token-bucket.ts'
import { closeServer, listenOn, urlHost } from './listen.ts'
import { HttpHandler, type WebHandler, type WebRequestInit } from './http-handler.ts'
import { NodeExchange } from './node-exchange.ts'
import { STREAMABLE_HTTP_DEFAULTS, type StreamableHttpOptions } from './streamable-http-options.ts'

export { STREAMABLE_HTTP_DEFAULTS } from './streamable-http-options.ts'
export type { StreamableHttpOptions } from './streamable-http-options.ts'
export { memoryRateLimiterStore, createMemoryRateLimiterStore } from '../lib/token-bucket.ts'
export type { RateLimiter, RateLimiterStore } from '../lib/token-bucket.ts'
export type { ClientRequest } from './client-policy.ts'
export type { WebHandler, WebRequestInit } from './http-handler.ts'

/**
 * A Streamable HTTP server (MCP 2025-03-26 onward) with the legacy HTTP+SSE transport beside it:
 * one implementation, three ways to mount it.
 *
 * - `start()` — its own node:http server on `host:port` (127.0.0.1 by default);
 * - `nodeHandler(req, res, body?)` — node:http's request listener, for a server of your own;
 * - `handle(request)` — the web-standard handler (`Request -> Promise<Response>`).
 *
 * Behind a framework (Express, Fastify, Hono) or on another runtime (Deno, Workers), use
 * `webHandler` from `rxmcp/web` instead: it binds nothing (`listen` does not open a port), and
 * {@link nodeHandler} mounts it on node:http frameworks.
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
  /** Answers a web-standard Request (see `WebHandler.fetch`); bound. */
  handle(request: Request, init?: WebRequestInit): Promise<Response>
  /** node:http's request listener; `body` is one a framework already parsed (see {@link nodeHandler}); bound. */
  nodeHandler(req: IncomingMessage, res: ServerResponse, body?: unknown): void
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
  /** See TransportServer.drain; the port closes at its end. */
  drain(options?: DrainOptions): Promise<void>
  close(): Promise<void>
}

/** Makes a {@link StreamableHttpServer}. */
export function streamableHttp(options: StreamableHttpOptions = {}): StreamableHttpServer {
  return new HttpTransportServer(options)
}

/**
 * A node:http request listener over a {@link WebHandler} (from `webHandler` in `rxmcp/web`), for
 * Express, Fastify and plain node:http: `(req, res, body?)`. A body the framework already parsed is
 * taken from `body`, else from `req.body` when the request stream was read to its end (Express
 * after `express.json()`), else read from the stream; a function in `body`'s place (Express's
 * `next`, when mounted as a route) is not a body. Node's objects are used directly: no web-stream
 * conversion on the way.
 * @example
 * const mcp = webHandler({ allowedHosts: ['localhost'] })
 * await server.listen(mcp)
 * app.use(express.json())
 * app.all('/mcp', nodeHandler(mcp))
 */
export function nodeHandler(handler: WebHandler): (req: IncomingMessage, res: ServerResponse, body?: unknown) => void {
  if (!(handler instanceof HttpHandler)) throw new TypeError('nodeHandler takes the handler webHandler() made')
  return (req, res, body) => serveNode(handler, req, res, body)
}

/** Serves one node:http request through the handler; an unexpected failure ends it with 500 (or cuts a started answer). */
function serveNode(handler: HttpHandler, req: IncomingMessage, res: ServerResponse, body: unknown): void {
  // Express calls a route's handler with `next` third: a function is never a body, so `req.body`
  // (or the stream) is read instead; taken as a body it would have answered every request -32700.
  const parsed = typeof body === 'function' ? undefined : body
  const exchange = new NodeExchange(req, res, handler.extraHeaders(req.headers.origin), parsed)
  handler.serve(exchange).catch(error => {
    if (!res.headersSent) { res.statusCode = 500; res.end() } else res.destroy(error instanceof Error ? error : undefined)
  })
}

/**
 * The listener: the web handler's core (http-handler.ts) with a node:http server of its own
 * (`start()`), and node's request objects served directly (`nodeHandler`).
 */
class HttpTransportServer implements StreamableHttpServer {
  readonly #options: StreamableHttpOptions
  readonly #handler: HttpHandler
  readonly connections: Observable<Transport>
  readonly requests: Observable<ReplyEnvelope>
  #http: HttpServer | undefined
  #url: string | undefined

  constructor(options: StreamableHttpOptions) {
    this.#options = options
    const handler = new HttpHandler(options)
    this.#handler = handler
    this.connections = handler.connections
    this.requests = handler.requests
    handler.startSweeping()
    this.nodeHandler = this.nodeHandler.bind(this)
    this.handle = this.handle.bind(this)
  }

  get url(): string | undefined { return this.#url }
  get httpServer(): HttpServer | undefined { return this.#http }
  get sessionCount(): number { return this.#handler.sessionCount }
  get rateLimiterStore(): RateLimiterStore { return this.#handler.rateLimiterStore }

  gauges(): readonly TransportGauge[] { return this.#handler.gauges() }

  async start(): Promise<void> {
    if (this.#http !== undefined) return
    const host = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    // node:http loads here, so the web-standard handler (`handle(Request)`) runs where it does not exist.
    // The specifier is held in a variable so that bundlers leave node:http out of browser bundles.
    const { createServer: createHttpServer } = await import(/* @vite-ignore */ NODE_HTTP) as typeof import('node:http')
    const http = createHttpServer({ noDelay: true, keepAliveTimeout: 30_000 }, this.nodeHandler)
    this.#http = http
    const port = await listenOn(http, this.#options.port ?? 0, host)
    this.#url = `http://${urlHost(host)}:${port}${this.#options.path ?? STREAMABLE_HTTP_DEFAULTS.path}`
  }

  /** See TransportServer.drain: the handler drains, then the socket closes. */
  async drain(options?: DrainOptions): Promise<void> {
    await this.#handler.drain(options)
    await this.close()
  }

  async close(): Promise<void> {
    await this.#handler.close()
    if (this.#http !== undefined) await closeServer(this.#http)
  }

  nodeHandler(req: IncomingMessage, res: ServerResponse, body?: unknown): void {
    serveNode(this.#handler, req, res, body)
  }

  handle(request: Request, init?: WebRequestInit): Promise<Response> {
    return this.#handler.fetch(request, init)
  }
}

/** Imported only by start(); see there. */
const NODE_HTTP = 'node:http'
