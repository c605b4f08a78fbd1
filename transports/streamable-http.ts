import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { Observable, Subject } from 'rxjs'
import type { Inbound, SendOptions, Transport, TransportServer } from '../lib/transport.ts'
import type { JsonRpcMessage, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { encodeSseComment, encodeSseEvent } from '../lib/codec/sse.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../lib/schema/types.ts'
import { createMemoryEventStore, type EventStore } from './event-store.ts'

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
  /** Sessions open now (Streamable HTTP and legacy SSE). */
  readonly sessionCount: number
  close(): Promise<void>
}

/** Makes a {@link StreamableHttpServer}. */
export function streamableHttp(options: StreamableHttpOptions = {}): StreamableHttpServer {
  return new HttpTransportServer(options)
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]']

/** A JSON-RPC error body for HTTP-level refusals. */
function rpcError(status: number, code: number, message: string, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status, headers: { 'content-type': 'application/json', ...headers },
  })
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
  get sessionCount(): number { return this.#sessions.size + this.#legacySessions.size }

  async start(): Promise<void> {
    if (this.#http !== undefined) return
    const host = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    const http = createHttpServer(this.nodeHandler)
    this.#http = http
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject)
      http.listen(this.#options.port ?? 0, host, () => { http.off('error', reject); resolve() })
    })
    const address = http.address()
    const port = typeof address === 'object' && address !== null ? address.port : this.#options.port
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${this.#path}`
  }

  async close(): Promise<void> {
    if (this.#isClosed) return
    this.#isClosed = true
    clearInterval(this.#timer)
    for (const session of [...this.#sessions.values(), ...this.#legacySessions.values()]) session.end()
    this.#sessions.clear()
    this.#legacySessions.clear()
    this.#connections.complete()
    const http = this.#http
    if (http !== undefined) {
      http.closeAllConnections()
      await new Promise<void>(resolve => http.close(() => resolve()))
    }
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

  // ---- node adapter ----

  nodeHandler(req: IncomingMessage, res: ServerResponse): void {
    void this.#serveNode(req, res).catch(error => {
      if (!res.headersSent) { res.statusCode = 500; res.end() } else res.destroy(error instanceof Error ? error : undefined)
    })
  }

  async #serveNode(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const controller = new AbortController()
    res.on('close', () => controller.abort())
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue
      if (Array.isArray(value)) for (const item of value) headers.append(name, item)
      else headers.set(name, value)
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method, headers, signal: controller.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : undefined),
    } as RequestInit)
    const response = await this.handle(request)
    const outHeaders: Record<string, string> = {}
    response.headers.forEach((value, name) => { outHeaders[name] = value })
    res.writeHead(response.status, outHeaders)
    if (response.body === null) { res.end(); return }
    res.flushHeaders()
    const reader = response.body.getReader()
    res.on('close', () => { void reader.cancel().catch(() => {}) })
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (!res.write(value)) await new Promise(resolve => res.once('drain', resolve).once('close', resolve))
    }
    res.end()
  }

  // ---- web-standard handler ----

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const refusal = this.#checkOrigin(request)
    if (refusal !== undefined) return refusal
    const cors = this.#corsHeaders(request)
    if (request.method === 'OPTIONS') {
      return new Response(null, { status: 204, headers: { ...cors, 'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS', 'access-control-allow-headers': 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id', 'access-control-max-age': '600' } })
    }
    let response: Response
    const legacySse = this.#options.legacySsePath === false ? undefined : this.#options.legacySsePath ?? STREAMABLE_HTTP_DEFAULTS.legacySsePath
    const legacyMessages = this.#options.legacyMessagesPath ?? STREAMABLE_HTTP_DEFAULTS.legacyMessagesPath
    if (url.pathname === this.#path) response = await this.#handleMcp(request)
    else if (legacySse !== undefined && url.pathname === legacySse && request.method === 'GET') response = this.#openLegacy(request, legacyMessages)
    else if (legacySse !== undefined && url.pathname === legacyMessages && request.method === 'POST') response = await this.#postLegacy(request, url)
    else response = new Response('Not Found', { status: 404 })
    for (const [name, value] of Object.entries(cors)) response.headers.set(name, value)
    return response
  }

  #checkOrigin(request: Request): Response | undefined {
    // DNS-rebinding protection: a page on a foreign origin must not reach a local server.
    const origin = request.headers.get('origin')
    if (origin !== null && !this.#isAllowedOrigin(origin)) return rpcError(403, -32000, 'Forbidden: origin not allowed')
    const host = request.headers.get('host')
    const allowedHosts = this.#options.allowedHosts
    const boundHost = this.#options.host ?? STREAMABLE_HTTP_DEFAULTS.host
    const isLoopbackBound = boundHost === '127.0.0.1' || boundHost === 'localhost' || boundHost === '::1'
    if (host !== null && (allowedHosts !== undefined || isLoopbackBound)) {
      const name = host.replace(/:\d+$/, '')
      const allowed = allowedHosts ?? LOOPBACK_HOSTS
      if (!allowed.includes(host) && !allowed.includes(name)) return rpcError(403, -32000, 'Forbidden: host not allowed')
    }
    return undefined
  }

  #isAllowedOrigin(origin: string): boolean {
    const allowed = this.#options.allowedOrigins
    if (allowed !== undefined) return allowed.includes('*') || allowed.includes(origin)
    try {
      const parsed = new URL(origin)
      return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && LOOPBACK_HOSTS.includes(parsed.hostname.includes(':') ? `[${parsed.hostname}]` : parsed.hostname)
        || LOOPBACK_HOSTS.includes(parsed.host.replace(/:\d+$/, ''))
    } catch {
      return false
    }
  }

  #corsHeaders(request: Request): Record<string, string> {
    const origins = this.#options.corsOrigins
    const origin = request.headers.get('origin')
    if (origins === undefined || origin === null) return {}
    if (!origins.includes('*') && !origins.includes(origin)) return {}
    return { 'access-control-allow-origin': origins.includes('*') ? '*' : origin, 'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version', vary: 'origin' }
  }

  async #handleMcp(request: Request): Promise<Response> {
    const version = request.headers.get('mcp-protocol-version')
    // MCP 2025-06-18 transports: an unsupported MCP-Protocol-Version is answered 400.
    if (version !== null && !this.#versions.includes(version)) return rpcError(400, -32000, `Bad Request: unsupported protocol version ${version}`)
    switch (request.method) {
      case 'POST': return this.#post(request)
      case 'GET': return this.#get(request)
      case 'DELETE': return this.#delete(request)
      default: return new Response('Method Not Allowed', { status: 405, headers: { allow: 'GET, POST, DELETE, OPTIONS' } })
    }
  }

  #session(request: Request): HttpSession | Response {
    const id = request.headers.get('mcp-session-id')
    if (id === null) return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required')
    const session = this.#sessions.get(id)
    // Unknown and expired look the same, so a guessed id learns nothing.
    if (session === undefined) return rpcError(404, -32001, 'Session not found')
    session.lastSeen = Date.now()
    return session
  }

  async #post(request: Request): Promise<Response> {
    const accept = request.headers.get('accept') ?? ''
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return rpcError(406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream')
    }
    const contentType = request.headers.get('content-type') ?? ''
    if (!contentType.includes('application/json')) return rpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json')
    const body = await readBody(request, this.#options.maxBodyBytes ?? STREAMABLE_HTTP_DEFAULTS.maxBodyBytes)
    if (body === undefined) return rpcError(413, -32000, 'Payload Too Large')
    const decoded = decodeJsonFrame(body, Infinity)
    if (decoded.type === 'invalid') return rpcError(400, -32700, decoded.error.message)
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
    if (this.#options.stateless) return this.#postStateless(payload, requestIds)
    let session: HttpSession
    if (isInitialize) {
      if (Array.isArray(payload) && payload.length > 1) return rpcError(400, -32600, 'Invalid Request: initialize must be sent alone')
      if (this.#sessions.size >= (this.#options.maxSessions ?? STREAMABLE_HTTP_DEFAULTS.maxSessions)) return rpcError(503, -32000, 'Service Unavailable: too many sessions')
      const id = (this.#options.sessionIdGenerator ?? defaultSessionId)()
      session = new HttpSession(id, this.#eventStore, this.#options.retryMs ?? STREAMABLE_HTTP_DEFAULTS.retryMs, () => this.#sessions.delete(id))
      session.initializeRequestId = requestIds[0]
      this.#sessions.set(id, session)
      this.#connections.next(session)
    } else {
      const found = this.#session(request)
      if (found instanceof Response) return found
      session = found
    }
    if (requestIds.length === 0) {
      session.receive(payload)
      return new Response(null, { status: 202, headers: { 'mcp-session-id': session.id } })
    }
    const headers = { 'mcp-session-id': session.id }
    if (this.#options.jsonResponse) {
      const answers = session.collect(requestIds, Array.isArray(payload))
      session.receive(payload)
      const answer = await answers
      return new Response(JSON.stringify(answer), { status: 200, headers: { ...headers, 'content-type': 'application/json' } })
    }
    const stream = session.openStream('post', requestIds, request.signal, version(request))
    session.receive(payload)
    return new Response(stream, { status: 200, headers: { ...headers, ...SSE_HEADERS } })
  }

  async #postStateless(payload: unknown, requestIds: RequestId[]): Promise<Response> {
    const session = new HttpSession('', undefined, 0, () => {})
    session.isStateless = true
    this.#connections.next(session)
    if (requestIds.length === 0) {
      session.receive(payload)
      // Let the notification reach its handler before the one-shot session ends.
      setImmediate(() => session.end())
      return new Response(null, { status: 202 })
    }
    const answers = session.collect(requestIds, Array.isArray(payload))
    session.receive(payload)
    try {
      const answer = await answers
      return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } })
    } finally {
      session.end()
    }
  }

  async #get(request: Request): Promise<Response> {
    if (this.#options.stateless) return new Response('Method Not Allowed', { status: 405, headers: { allow: 'POST' } })
    const accept = request.headers.get('accept') ?? ''
    if (!accept.includes('text/event-stream')) return rpcError(406, -32000, 'Not Acceptable: the client must accept text/event-stream')
    const found = this.#session(request)
    if (found instanceof Response) return found
    const lastEventId = request.headers.get('last-event-id')
    if (lastEventId !== null) {
      const resumed = await found.resume(lastEventId, request.signal)
      if (resumed === undefined) return rpcError(404, -32000, 'Unknown Last-Event-ID')
      return new Response(resumed, { status: 200, headers: { 'mcp-session-id': found.id, ...SSE_HEADERS } })
    }
    return new Response(found.openStream('standalone', [], request.signal, version(request)), { status: 200, headers: { 'mcp-session-id': found.id, ...SSE_HEADERS } })
  }

  #delete(request: Request): Response {
    if (this.#options.stateless) return new Response('Method Not Allowed', { status: 405, headers: { allow: 'POST' } })
    const found = this.#session(request)
    if (found instanceof Response) return found
    this.#sessions.delete(found.id)
    found.end()
    return new Response(null, { status: 200 })
  }

  // ---- legacy HTTP+SSE (2024-11-05) ----

  #openLegacy(request: Request, messagesPath: string): Response {
    const accept = request.headers.get('accept') ?? ''
    if (!accept.includes('text/event-stream') && !accept.includes('*/*') && accept !== '') return rpcError(406, -32000, 'Not Acceptable')
    if (this.sessionCount >= (this.#options.maxSessions ?? STREAMABLE_HTTP_DEFAULTS.maxSessions)) return rpcError(503, -32000, 'Service Unavailable: too many sessions')
    const id = (this.#options.sessionIdGenerator ?? defaultSessionId)()
    const session = new LegacySession(id, `${messagesPath}?sessionId=${encodeURIComponent(id)}`, request.signal, () => this.#legacySessions.delete(id))
    this.#legacySessions.set(id, session)
    this.#connections.next(session)
    return new Response(session.body, { status: 200, headers: SSE_HEADERS })
  }

  async #postLegacy(request: Request, url: URL): Promise<Response> {
    const id = url.searchParams.get('sessionId')
    const session = id === null ? undefined : this.#legacySessions.get(id)
    if (session === undefined) return new Response('Session not found', { status: 404 })
    const body = await readBody(request, this.#options.maxBodyBytes ?? STREAMABLE_HTTP_DEFAULTS.maxBodyBytes)
    if (body === undefined) return new Response('Payload Too Large', { status: 413 })
    session.receiveFrame(body)
    return new Response('Accepted', { status: 202 })
  }
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' }

function version(request: Request): string | undefined {
  return request.headers.get('mcp-protocol-version') ?? undefined
}

function defaultSessionId(): string {
  // 256 bits from the OS CSPRNG: unguessable, and URL- and header-safe.
  return randomBytes(32).toString('base64url')
}

/** Reads a body up to `limit` bytes; undefined when it is larger. */
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

const encoder = new TextEncoder()

/** One SSE stream of a session: a POST's answer stream, or a standalone GET stream. */
class HttpStream {
  /** Requests whose responses still have to go out on this stream (POST streams). */
  readonly pending: Set<RequestId>
  /** Where events are written; undefined while the client is away (they are stored for resumption). */
  controller: ReadableStreamDefaultController<Uint8Array> | undefined

  constructor(readonly id: string, readonly kind: 'post' | 'standalone', pending: RequestId[]) {
    this.pending = new Set(pending)
  }

  write(text: string): void {
    try { this.controller?.enqueue(encoder.encode(text)) } catch { this.controller = undefined }
  }

  end(): void {
    try { this.controller?.close() } catch { /* already closed by the client */ }
    this.controller = undefined
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
    for (const stream of this.#streams.values()) if (stream.controller !== undefined) return true
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

  openStream(kind: 'post' | 'standalone', requestIds: RequestId[], signal: AbortSignal, protocolVersion: string | undefined): ReadableStream<Uint8Array> {
    const stream = new HttpStream(`${this.id.slice(0, 8)}${(++this.#streamCount).toString(36)}${randomBytes(4).toString('hex')}`, kind, requestIds)
    this.#streams.set(stream.id, stream)
    for (const id of requestIds) this.#byRequest.set(id, stream)
    if (kind === 'standalone') this.#standalone.push(stream)
    return new ReadableStream<Uint8Array>({
      start: controller => {
        stream.controller = controller
        // SEP-1699: a priming event with an id (and the retry delay) lets the client resume at once.
        // Only clients of 2025-11-25 or later expect the empty-data priming event.
        const version = this.protocolVersion ?? protocolVersion
        if (this.eventStore !== undefined && (version === undefined || version >= '2025-11-25')) {
          // Written at once when the store answers at once: the handler may close the stream right away.
          const prime = (eventId: string) => stream.write(`id: ${eventId}\nretry: ${this.retryMs}\ndata: \n\n`)
          const stored = this.eventStore.storeEvent(stream.id, [] as unknown as JsonRpcPayload)
          if (typeof stored === 'string') prime(stored)
          else void stored.then(prime)
        }
        signal.addEventListener('abort', () => this.#detach(stream), { once: true })
      },
      cancel: () => this.#detach(stream),
    })
  }

  async resume(lastEventId: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
    if (this.eventStore === undefined) return undefined
    const replay: string[] = []
    const streamId = await this.eventStore.replayEventsAfter(lastEventId, (eventId, message) => {
      if (Array.isArray(message) && message.length === 0) return
      replay.push(encodeSseEvent({ event: 'message', id: eventId, data: JSON.stringify(message) }))
    })
    if (streamId === undefined || !streamId.startsWith(this.id.slice(0, 8))) return undefined
    const stream = this.#streams.get(streamId)
    return new ReadableStream<Uint8Array>({
      start: controller => {
        for (const text of replay) controller.enqueue(encoder.encode(text))
        // The stream is still live (its requests are not all answered, or it is the standalone one): reattach.
        if (stream !== undefined && stream.controller === undefined) {
          stream.controller = controller
          signal.addEventListener('abort', () => this.#detach(stream), { once: true })
          if (stream.kind === 'post' && stream.pending.size === 0) this.#finish(stream)
        } else {
          controller.close()
        }
      },
      cancel: () => { if (stream !== undefined) this.#detach(stream) },
    })
  }

  #detach(stream: HttpStream): void {
    stream.controller = undefined
    if (stream.kind === 'standalone') {
      const index = this.#standalone.indexOf(stream)
      if (index >= 0) this.#standalone.splice(index, 1)
      // Without an event store, nothing can resume it.
      if (this.eventStore === undefined) this.#streams.delete(stream.id)
    } else if (this.eventStore === undefined) {
      // Nobody can resume a POST stream without a store; keep routing so answers are dropped quietly.
    }
  }

  #finish(stream: HttpStream): void {
    stream.end()
    this.#streams.delete(stream.id)
  }

  send(payload: JsonRpcPayload, options?: SendOptions): void {
    if (this.#isEnded) throw new TransportError('The HTTP session has ended')
    const responseId = responseIdOf(payload)
    if (responseId !== undefined && responseId === this.initializeRequestId && !Array.isArray(payload) && 'result' in payload) {
      const version = payload.result.protocolVersion
      if (typeof version === 'string') this.protocolVersion = version
    }
    const key = responseId ?? options?.relatedRequestId
    if (responseId !== undefined) {
      const collector = this.#collectors.get(responseId)
      if (collector !== undefined) return collector(payload)
    }
    const stream = (key !== undefined ? this.#byRequest.get(key) : undefined) ?? this.#standalone.at(-1)
    if (stream === undefined) return
    const deliver = (eventId: string | undefined) => {
      stream.write(encodeSseEvent(eventId === undefined ? { event: 'message', data: JSON.stringify(payload) } : { event: 'message', id: eventId, data: JSON.stringify(payload) }))
      if (responseId !== undefined && stream.kind === 'post') {
        for (const id of responseIds(payload)) { stream.pending.delete(id); this.#byRequest.delete(id) }
        // Every request of the POST is answered: its stream is done.
        if (stream.pending.size === 0 && stream.controller !== undefined) this.#finish(stream)
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
    if (stream === undefined || stream.controller === undefined) return
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
  readonly body: ReadableStream<Uint8Array>
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined
  #isEnded = false

  constructor(readonly id: string, endpoint: string, signal: AbortSignal, readonly onEnd: () => void) {
    this.inbound = this.#inbound.asObservable()
    this.body = new ReadableStream<Uint8Array>({
      start: controller => {
        this.#controller = controller
        // MCP 2024-11-05: the first event names the URI the client POSTs its messages to.
        controller.enqueue(encoder.encode(encodeSseEvent({ event: 'endpoint', data: endpoint })))
        signal.addEventListener('abort', () => this.end(), { once: true })
      },
      cancel: () => this.end(),
    })
  }

  receiveFrame(body: Uint8Array): void {
    this.#inbound.next(decodeJsonFrame(body, Infinity))
  }

  keepAlive(): void {
    try { this.#controller?.enqueue(encoder.encode(encodeSseComment('keep-alive'))) } catch { this.end() }
  }

  send(payload: JsonRpcPayload): void {
    if (this.#isEnded) throw new TransportError('The SSE session has ended')
    try {
      this.#controller?.enqueue(encoder.encode(encodeSseEvent({ event: 'message', data: JSON.stringify(payload) })))
    } catch {
      this.end()
    }
  }

  async close(): Promise<void> { this.end() }

  end(): void {
    if (this.#isEnded) return
    this.#isEnded = true
    try { this.#controller?.close() } catch { /* the client went first */ }
    this.#controller = undefined
    this.#inbound.complete()
    this.onEnd()
  }
}
