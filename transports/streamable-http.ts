import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import { randomBytes } from 'node:crypto'
import { Observable, Subject } from 'rxjs'
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

/** Options of {@link streamableHttp}. */
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
  /** Idle time after which a session is closed (default 30 minutes). */
  sessionTtlMs?: number
  /** Most sessions at once; initialize beyond it is answered 503 (default 10,000). */
  maxSessions?: number
  /** Largest request body in bytes (default 4 MiB). */
  maxBodyBytes?: number
  /** Origins allowed to call (default: http(s)://localhost, 127.0.0.1 and [::1] on any port). Requests without Origin pass. */
  allowedOrigins?: readonly string[]
  /** Host header values allowed (default: the loopback names on any port when bound to loopback; no check otherwise). */
  allowedHosts?: readonly string[]
  /** CORS: origins that get Access-Control-Allow-Origin (default none; `['*']` for any). */
  corsOrigins?: readonly string[]
  /** The SSE `retry` field sent with the priming event, in ms (default 1,000). */
  retryMs?: number
  /** Keep-alive comment interval on open SSE streams, in ms (default 15,000; 0 turns it off). */
  keepAliveMs?: number
  /** Protocol versions accepted in MCP-Protocol-Version (default: every supported revision). */
  protocolVersions?: readonly string[]
}

/** DEFAULTS of {@link StreamableHttpOptions}. */
export const STREAMABLE_HTTP_DEFAULTS = {
  host: '127.0.0.1', path: '/mcp', legacySsePath: '/sse', legacyMessagesPath: '/messages', sessionTtlMs: 30 * 60_000,
  maxSessions: 10_000, maxBodyBytes: DEFAULT_MAX_MESSAGE_SIZE, retryMs: 1000, keepAliveMs: 15_000,
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


/** Where SSE text goes: a node response or a web ReadableStream. */
interface Sink {
  write(text: string): void
  end(): void
}

/**
 * One HTTP request and its answer, as the core handler sees it, whatever the server underneath:
 * node:http objects are used directly (no web-stream conversion on the hot path), a web Request
 * is adapted once. Exactly one of `reply` and `stream` is called.
 */
interface Exchange {
  readonly method: string
  readonly pathname: string
  readonly search: string
  header(name: string): string | null
  /** The body, up to `limit` bytes; undefined when larger. */
  body(limit: number): Promise<Uint8Array | undefined>
  /** Calls `listener` when the client goes away (or the answer ends). */
  onClose(listener: () => void): void
  reply(status: number, headers: Record<string, string>, body?: string): void
  stream(status: number, headers: Record<string, string>): Sink
}

const JSON_HEADERS = { 'content-type': 'application/json' }
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' }
const encoder = new TextEncoder()

/** Answers with a JSON-RPC error body (HTTP-level refusals). */
function replyError(exchange: Exchange, status: number, code: number, message: string, headers?: Record<string, string>): void {
  exchange.reply(status, { ...JSON_HEADERS, ...headers }, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }))
}

/** An Exchange over node:http. */
class NodeExchange implements Exchange {
  readonly method: string
  readonly pathname: string
  readonly search: string
  constructor(readonly req: IncomingMessage, readonly res: ServerResponse, readonly extraHeaders: Record<string, string>) {
    this.method = req.method ?? 'GET'
    const url = req.url ?? '/'
    const question = url.indexOf('?')
    this.pathname = question < 0 ? url : url.slice(0, question)
    this.search = question < 0 ? '' : url.slice(question)
  }
  header(name: string): string | null {
    const value = this.req.headers[name]
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
  }
  body(limit: number): Promise<Uint8Array | undefined> {
    const declared = Number(this.req.headers['content-length'] ?? NaN)
    if (declared > limit) { this.req.resume(); return Promise.resolve(undefined) }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      let size = 0
      let isOver = false
      this.req.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > limit) { isOver = true; chunks.length = 0; return }
        if (!isOver) chunks.push(chunk)
      })
      this.req.on('end', () => resolve(isOver ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)))
      this.req.on('error', reject)
    })
  }
  onClose(listener: () => void): void {
    this.res.on('close', listener)
  }
  reply(status: number, headers: Record<string, string>, body?: string): void {
    this.res.writeHead(status, { ...headers, ...this.extraHeaders })
    this.res.end(body)
  }
  stream(status: number, headers: Record<string, string>): Sink {
    const res = this.res
    // SSE events are small and must go out at once, not wait for Nagle's algorithm.
    res.socket?.setNoDelay(true)
    res.writeHead(status, { ...headers, ...this.extraHeaders })
    res.flushHeaders()
    return {
      write: text => { if (!res.writableEnded && !res.destroyed) res.write(text) },
      end: () => { if (!res.writableEnded) res.end() },
    }
  }
}

/** An Exchange over a web-standard Request; `response` settles with the Response. */
class WebExchange implements Exchange {
  readonly method: string
  readonly pathname: string
  readonly search: string
  readonly response: Promise<Response>
  #resolve!: (response: Response) => void
  readonly #closeListeners: (() => void)[] = []
  constructor(readonly request: Request, readonly extraHeaders: Record<string, string>) {
    const url = new URL(request.url)
    this.method = request.method
    this.pathname = url.pathname
    this.search = url.search
    this.response = new Promise(resolve => { this.#resolve = resolve })
    request.signal?.addEventListener('abort', () => this.#closed(), { once: true })
  }
  #closed(): void {
    for (const listener of this.#closeListeners.splice(0)) listener()
  }
  header(name: string): string | null { return this.request.headers.get(name) }
  body(limit: number): Promise<Uint8Array | undefined> { return readBody(this.request, limit) }
  onClose(listener: () => void): void { this.#closeListeners.push(listener) }
  reply(status: number, headers: Record<string, string>, body?: string): void {
    this.#resolve(new Response(body ?? null, { status, headers: { ...headers, ...this.extraHeaders } }))
  }
  stream(status: number, headers: Record<string, string>): Sink {
    let controller!: ReadableStreamDefaultController<Uint8Array>
    let isOpen = true
    const body = new ReadableStream<Uint8Array>({
      start: c => { controller = c },
      cancel: () => { isOpen = false; this.#closed() },
    })
    this.#resolve(new Response(body, { status, headers: { ...headers, ...this.extraHeaders } }))
    return {
      write: text => { if (isOpen) try { controller.enqueue(encoder.encode(text)) } catch { isOpen = false } },
      end: () => { if (isOpen) { isOpen = false; try { controller.close() } catch { /* cancelled */ } } this.#closed() },
    }
  }
}

class HttpTransportServer implements StreamableHttpServer {
  readonly #options: StreamableHttpOptions
  readonly #connections = new Subject<Transport>()
  readonly connections: Observable<Transport> = this.#connections.asObservable()
  readonly #sessions = new Map<string, HttpSession>()
  readonly #legacySessions = new Map<string, LegacySession>()
  readonly #eventStore: EventStore | undefined
  readonly #path: string
  readonly #versions: readonly string[]
  #http: HttpServer | undefined
  #url: string | undefined
  /** Sweeps idle sessions and sends keep-alives; unref'd so it never holds the process open. */
  #timer: ReturnType<typeof setInterval> | undefined
  #lastKeepAlive = Date.now()
  #isClosed = false

  constructor(options: StreamableHttpOptions) {
    this.#options = options
    this.#eventStore = options.eventStore === false ? undefined : options.eventStore ?? createMemoryEventStore()
    this.#path = options.path ?? STREAMABLE_HTTP_DEFAULTS.path
    this.#versions = options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS
    this.nodeHandler = this.nodeHandler.bind(this)
    const ttl = options.sessionTtlMs ?? STREAMABLE_HTTP_DEFAULTS.sessionTtlMs
    const keepAlive = options.keepAliveMs ?? STREAMABLE_HTTP_DEFAULTS.keepAliveMs
    const tick = Math.max(50, Math.min(ttl / 4, keepAlive > 0 ? keepAlive : Infinity, 60_000))
    this.#timer = setInterval(() => this.#sweep(ttl, keepAlive), tick)
    this.#timer.unref()
  }

  get url(): string | undefined { return this.#url }
  get httpServer(): HttpServer | undefined { return this.#http }
  get sessionCount(): number { return this.#sessions.size + this.#legacySessions.size }

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
    for (const session of [...this.#sessions.values(), ...this.#legacySessions.values()]) session.end()
    this.#sessions.clear()
    this.#legacySessions.clear()
    this.#connections.complete()
    if (this.#http !== undefined) await closeServer(this.#http)
  }

  #sweep(ttl: number, keepAlive: number): void {
    const now = Date.now()
    for (const [id, session] of this.#sessions) {
      // A session with an open stream is in use, however long ago its last request was.
      if (now - session.lastSeen > ttl && !session.hasOpenStream()) {
        this.#sessions.delete(id)
        session.end()
      }
    }
    if (keepAlive > 0 && now - this.#lastKeepAlive >= keepAlive) {
      this.#lastKeepAlive = now
      for (const session of this.#sessions.values()) session.keepAlive()
      for (const session of this.#legacySessions.values()) session.keepAlive()
    }
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
    const allowedHosts = this.#options.allowedHosts
    const boundHost = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    const isLoopbackBound = boundHost === '127.0.0.1' || boundHost === 'localhost' || boundHost === '::1'
    if (host !== null && (allowedHosts !== undefined || isLoopbackBound)) {
      const name = host.replace(/:\d+$/, '')
      const allowed = allowedHosts ?? LOOPBACK_HOSTS
      if (!allowed.includes(host) && !allowed.includes(name)) { replyError(exchange, 403, -32000, 'Forbidden: host not allowed'); return false }
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
    if (session === undefined) { replyError(exchange, 404, -32001, 'Session not found'); return undefined }
    session.lastSeen = Date.now()
    return session
  }

  async #post(exchange: Exchange): Promise<void> {
    const accept = exchange.header('accept') ?? ''
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return replyError(exchange, 406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream')
    }
    const contentType = exchange.header('content-type') ?? ''
    if (!contentType.includes('application/json')) return replyError(exchange, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json')
    const body = await exchange.body(this.#options.maxBodyBytes ?? STREAMABLE_HTTP_DEFAULTS.maxBodyBytes)
    if (body === undefined) return replyError(exchange, 413, -32000, 'Payload Too Large')
    const decoded = decodeJsonFrame(body, Infinity)
    if (decoded.type === 'invalid') return replyError(exchange, 400, -32700, decoded.error.message)
    const payload = decoded.message
    const messages: unknown[] = Array.isArray(payload) ? payload : [payload]
    const requestIds: RequestId[] = []
    let isInitialize = false
    for (const message of messages) {
      if (typeof message !== 'object' || message === null) continue
      const { id, method } = message as { id?: unknown; method?: unknown }
      if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) {
        requestIds.push(id)
        if (method === 'initialize') isInitialize = true
      }
    }
    if (this.#options.stateless) return this.#postStateless(exchange, payload, requestIds)
    let session: HttpSession
    if (isInitialize) {
      if (Array.isArray(payload) && payload.length > 1) return replyError(exchange, 400, -32600, 'Invalid Request: initialize must be sent alone')
      if (this.#sessions.size >= (this.#options.maxSessions ?? STREAMABLE_HTTP_DEFAULTS.maxSessions)) return replyError(exchange, 503, -32000, 'Service Unavailable: too many sessions')
      const id = (this.#options.sessionIdGenerator ?? defaultSessionId)()
      session = new HttpSession(id, this.#eventStore, this.#options.retryMs ?? STREAMABLE_HTTP_DEFAULTS.retryMs, () => this.#sessions.delete(id))
      session.initializeRequestId = requestIds[0]
      this.#sessions.set(id, session)
      this.#connections.next(session)
    } else {
      const found = this.#session(exchange)
      if (found === undefined) return
      session = found
    }
    const headers = { 'mcp-session-id': session.id }
    if (requestIds.length === 0) {
      session.receive(payload)
      return exchange.reply(202, headers)
    }
    if (this.#options.jsonResponse) {
      const answers = session.collect(requestIds, Array.isArray(payload))
      session.receive(payload)
      return exchange.reply(200, { ...headers, ...JSON_HEADERS }, JSON.stringify(await answers))
    }
    session.openStream(exchange, 'post', requestIds, exchange.header('mcp-protocol-version') ?? undefined)
    session.receive(payload)
  }

  async #postStateless(exchange: Exchange, payload: unknown, requestIds: RequestId[]): Promise<void> {
    const session = new HttpSession('', undefined, 0, () => {})
    session.isStateless = true
    this.#connections.next(session)
    if (requestIds.length === 0) {
      session.receive(payload)
      // Let the notification reach its handler before the one-shot session ends.
      setImmediate(() => session.end())
      return exchange.reply(202, {})
    }
    const answers = session.collect(requestIds, Array.isArray(payload))
    session.receive(payload)
    try {
      exchange.reply(200, JSON_HEADERS, JSON.stringify(await answers))
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
    found.openStream(exchange, 'standalone', [], exchange.header('mcp-protocol-version') ?? undefined)
  }

  #delete(exchange: Exchange): void {
    if (this.#options.stateless) return exchange.reply(405, { allow: 'POST' })
    const found = this.#session(exchange)
    if (found === undefined) return
    this.#sessions.delete(found.id)
    found.end()
    exchange.reply(200, {})
  }

  // ---- legacy HTTP+SSE (2024-11-05) ----

  #openLegacy(exchange: Exchange, messagesPath: string): void {
    const accept = exchange.header('accept') ?? ''
    if (!accept.includes('text/event-stream') && !accept.includes('*/*') && accept !== '') return replyError(exchange, 406, -32000, 'Not Acceptable')
    if (this.sessionCount >= (this.#options.maxSessions ?? STREAMABLE_HTTP_DEFAULTS.maxSessions)) return replyError(exchange, 503, -32000, 'Service Unavailable: too many sessions')
    const id = (this.#options.sessionIdGenerator ?? defaultSessionId)()
    const session = new LegacySession(id, () => this.#legacySessions.delete(id))
    this.#legacySessions.set(id, session)
    session.attach(exchange, `${messagesPath}?sessionId=${encodeURIComponent(id)}`)
    this.#connections.next(session)
  }

  async #postLegacy(exchange: Exchange): Promise<void> {
    const id = new URLSearchParams(exchange.search).get('sessionId')
    const session = id === null ? undefined : this.#legacySessions.get(id)
    if (session === undefined) return exchange.reply(404, { 'content-type': 'text/plain' }, 'Session not found')
    const body = await exchange.body(this.#options.maxBodyBytes ?? STREAMABLE_HTTP_DEFAULTS.maxBodyBytes)
    if (body === undefined) return exchange.reply(413, { 'content-type': 'text/plain' }, 'Payload Too Large')
    session.receiveFrame(body)
    exchange.reply(202, { 'content-type': 'text/plain' }, 'Accepted')
  }
}

function defaultSessionId(): string {
  // 256 bits from the OS CSPRNG: unguessable, and URL- and header-safe.
  return randomBytes(32).toString('base64url')
}

/** Reads a web Request body up to `limit` bytes; undefined when it is larger. */
async function readBody(request: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get('content-length') ?? NaN)
  if (declared > limit) return undefined
  if (request.body === null) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > limit) { void reader.cancel(); return undefined }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) { body.set(chunk, offset); offset += chunk.length }
  return body
}

// ---- one Streamable HTTP session ----

/** One SSE stream of a session: a POST's answer stream, or a standalone GET stream. */
class HttpStream {
  /** Requests whose responses still have to go out on this stream (POST streams). */
  readonly pending: Set<RequestId>
  /** Where events are written; undefined while the client is away (they are stored for resumption). */
  sink: Sink | undefined

  constructor(readonly id: string, readonly kind: 'post' | 'standalone', pending: RequestId[]) {
    this.pending = new Set(pending)
  }

  write(text: string): void {
    this.sink?.write(text)
  }

  end(): void {
    const sink = this.sink
    this.sink = undefined
    sink?.end()
  }
}

class HttpSession implements Transport {
  readonly kind = 'streamable-http'
  readonly #inbound = new Subject<Inbound>()
  readonly inbound: Observable<Inbound>
  /** Open streams by id. */
  readonly #streams = new Map<string, HttpStream>()
  /** Which stream answers each request in flight. */
  readonly #byRequest = new Map<RequestId, HttpStream>()
  /** Collectors of JSON-response POSTs, by request id. */
  readonly #collectors = new Map<RequestId, (response: JsonRpcPayload) => void>()
  /** Standalone GET streams, newest last: unrelated messages go to the newest. */
  readonly #standalone: HttpStream[] = []
  lastSeen = Date.now()
  /** One exchange, no session (stateless mode). */
  isStateless = false
  /** The id of the initialize request, to read the negotiated version off its answer. */
  initializeRequestId: RequestId | undefined
  /** The negotiated protocol version, once initialize is answered. */
  protocolVersion: string | undefined
  #isEnded = false
  #streamCount = 0

  constructor(readonly id: string, readonly eventStore: EventStore | undefined, readonly retryMs: number, readonly onEnd: () => void) {
    this.inbound = this.#inbound.asObservable()
  }

  receive(payload: unknown): void {
    this.#inbound.next({ type: 'message', message: payload })
  }

  hasOpenStream(): boolean {
    for (const stream of this.#streams.values()) if (stream.sink !== undefined) return true
    return false
  }

  keepAlive(): void {
    for (const stream of this.#streams.values()) stream.write(encodeSseComment('keep-alive'))
  }

  collect(requestIds: RequestId[], isBatch: boolean): Promise<JsonRpcPayload> {
    return new Promise(resolve => {
      const answers: JsonRpcMessage[] = []
      let remaining = requestIds.length
      for (const id of requestIds) {
        this.#collectors.set(id, response => {
          if (Array.isArray(response)) answers.push(...response)
          else answers.push(response)
          this.#collectors.delete(id)
          if (--remaining === 0) resolve(isBatch ? answers : answers[0]!)
        })
      }
    })
  }

  openStream(exchange: Exchange, kind: 'post' | 'standalone', requestIds: RequestId[], protocolVersion: string | undefined): void {
    // Stream ids start with a prefix of the session id, so a Last-Event-ID names its session too.
    const stream = new HttpStream(`${this.id.slice(0, 8)}${(++this.#streamCount).toString(36)}`, kind, requestIds)
    this.#streams.set(stream.id, stream)
    for (const id of requestIds) this.#byRequest.set(id, stream)
    if (kind === 'standalone') this.#standalone.push(stream)
    const sink = exchange.stream(200, { ...SSE_HEADERS, 'mcp-session-id': this.id })
    stream.sink = sink
    exchange.onClose(() => { if (stream.sink === sink) this.#detach(stream) })
    // SEP-1699: a priming event with an id (and the retry delay) lets the client resume at once.
    // Only clients of 2025-11-25 or later expect its empty data.
    const version = this.protocolVersion ?? protocolVersion
    if (this.eventStore !== undefined && (version === undefined || version >= '2025-11-25')) {
      // Written at once when the store answers at once: the handler may close the stream right away.
      const prime = (eventId: string) => stream.write(`id: ${eventId}\nretry: ${this.retryMs}\ndata: \n\n`)
      const stored = this.eventStore.storeEvent(stream.id, PRIMING)
      if (typeof stored === 'string') prime(stored)
      else void stored.then(prime)
    }
  }

  async resume(exchange: Exchange, lastEventId: string): Promise<boolean> {
    if (this.eventStore === undefined) return false
    const replay: string[] = []
    const streamId = await this.eventStore.replayEventsAfter(lastEventId, (eventId, message) => {
      if (message === PRIMING || (Array.isArray(message) && message.length === 0)) return
      replay.push(encodeSseEvent({ event: 'message', id: eventId, data: JSON.stringify(message) }))
    })
    if (streamId === undefined || !streamId.startsWith(this.id.slice(0, 8))) return false
    const stream = this.#streams.get(streamId)
    const sink = exchange.stream(200, { ...SSE_HEADERS, 'mcp-session-id': this.id })
    for (const text of replay) sink.write(text)
    // The stream is still live (requests not all answered, or the standalone one): reattach.
    if (stream !== undefined && stream.sink === undefined) {
      stream.sink = sink
      exchange.onClose(() => { if (stream.sink === sink) this.#detach(stream) })
      if (stream.kind === 'post' && stream.pending.size === 0) this.#finish(stream)
    } else {
      sink.end()
    }
    return true
  }

  #detach(stream: HttpStream): void {
    stream.sink = undefined
    if (stream.kind === 'standalone') {
      const index = this.#standalone.indexOf(stream)
      if (index >= 0) this.#standalone.splice(index, 1)
      // Without an event store, nothing can resume it.
      if (this.eventStore === undefined) this.#streams.delete(stream.id)
    }
  }

  #finish(stream: HttpStream): void {
    // Called only with the client attached: it has every event, so none needs keeping for replay.
    stream.end()
    this.#streams.delete(stream.id)
    void this.eventStore?.deleteStream?.(stream.id)
  }

  send(payload: JsonRpcPayload, options?: SendOptions): void {
    if (this.#isEnded) throw new TransportError('The HTTP session has ended')
    const responseId = responseIdOf(payload)
    if (responseId !== undefined && responseId === this.initializeRequestId && !Array.isArray(payload) && 'result' in payload) {
      const version = payload.result.protocolVersion
      if (typeof version === 'string') this.protocolVersion = version
    }
    if (responseId !== undefined) {
      const collector = this.#collectors.get(responseId)
      if (collector !== undefined) return collector(payload)
    }
    const key = responseId ?? options?.relatedRequestId
    const stream = (key !== undefined ? this.#byRequest.get(key) : undefined) ?? this.#standalone.at(-1)
    if (stream === undefined) return
    const deliver = (eventId: string | undefined) => {
      const data = JSON.stringify(payload)
      stream.write(eventId === undefined ? `event: message\ndata: ${data}\n\n` : `event: message\nid: ${eventId}\ndata: ${data}\n\n`)
      if (responseId !== undefined && stream.kind === 'post') {
        for (const id of responseIds(payload)) { stream.pending.delete(id); this.#byRequest.delete(id) }
        // Every request of the POST is answered: its stream is done.
        if (stream.pending.size === 0 && stream.sink !== undefined) this.#finish(stream)
      }
    }
    if (this.eventStore === undefined) return deliver(undefined)
    const stored = this.eventStore.storeEvent(stream.id, payload)
    if (typeof stored === 'string') deliver(stored)
    else void stored.then(deliver)
  }

  closeStream(requestId: RequestId): void {
    // Without a store the messages sent meanwhile would be lost, so the stream stays open.
    if (this.eventStore === undefined) return
    const stream = this.#byRequest.get(requestId)
    if (stream === undefined || stream.sink === undefined) return
    // Ended but kept: later events are stored under it and replayed when the client comes back.
    stream.end()
  }

  async close(): Promise<void> {
    this.end()
  }

  end(): void {
    if (this.#isEnded) return
    this.#isEnded = true
    for (const stream of this.#streams.values()) stream.end()
    this.#streams.clear()
    this.#byRequest.clear()
    this.#inbound.complete()
    this.onEnd()
  }
}

/** What the store keeps for a priming event: no message, only a position in the stream. */
const PRIMING = [] as unknown as JsonRpcPayload

function responseIdOf(payload: JsonRpcPayload): RequestId | undefined {
  const first = Array.isArray(payload) ? payload[0] : payload
  if (first === undefined || 'method' in first || !('id' in first) || first.id === null) return undefined
  return first.id
}

function responseIds(payload: JsonRpcPayload): RequestId[] {
  const ids: RequestId[] = []
  for (const message of Array.isArray(payload) ? payload : [payload]) {
    if (!('method' in message) && 'id' in message && message.id !== null) ids.push(message.id)
  }
  return ids
}

// ---- one legacy HTTP+SSE session ----

class LegacySession implements Transport {
  readonly kind = 'sse'
  readonly #inbound = new Subject<Inbound>()
  readonly inbound: Observable<Inbound>
  #sink: Sink | undefined
  #isEnded = false

  constructor(readonly id: string, readonly onEnd: () => void) {
    this.inbound = this.#inbound.asObservable()
  }

  attach(exchange: Exchange, endpoint: string): void {
    const sink = exchange.stream(200, SSE_HEADERS)
    this.#sink = sink
    // MCP 2024-11-05: the first event names the URI the client POSTs its messages to.
    sink.write(encodeSseEvent({ event: 'endpoint', data: endpoint }))
    exchange.onClose(() => this.end())
  }

  receiveFrame(body: Uint8Array): void {
    this.#inbound.next(decodeJsonFrame(body, Infinity))
  }

  keepAlive(): void {
    this.#sink?.write(encodeSseComment('keep-alive'))
  }

  send(payload: JsonRpcPayload): void {
    if (this.#isEnded) throw new TransportError('The SSE session has ended')
    this.#sink?.write(`event: message\ndata: ${JSON.stringify(payload)}\n\n`)
  }

  async close(): Promise<void> { this.end() }

  end(): void {
    if (this.#isEnded) return
    this.#isEnded = true
    const sink = this.#sink
    this.#sink = undefined
    sink?.end()
    this.#inbound.complete()
    this.onEnd()
  }
}
