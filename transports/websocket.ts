import { authorizeMessage, type AuthAnswer, type AuthRequest, type Authenticator, type Principal } from '../lib/auth.ts'
import type { IncomingMessage, Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import { asyncScheduler, interval, Observable, Subject, Subscription, type SchedulerLike } from '../lib/rx.ts'
import type { WebSocket, WebSocketServer, RawData } from 'ws'
import type { Inbound, Transport, TransportServer } from '../lib/transport.ts'
import type { JsonRpcErrorObject, JsonRpcErrorResponse, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, TransportError } from '../lib/jsonrpc/errors.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { decodeMsgpackFrame, encodeMsgpack, isMsgpackLoaded, loadMsgpack } from '../lib/codec/msgpack.ts'
import { isAllowedHost, isAllowedOrigin, isCrossSiteWithoutOrigin } from './origin.ts'
import { closeServer, listenOn, urlHost } from './listen.ts'
import { WS_SUBPROTOCOL } from './websocket-client.ts'

/** The WebSocket subprotocols (defined beside the client, which browsers load without this file). */
export { WS_SUBPROTOCOL }

/** Options of {@link websocket}. */
export interface WebSocketServerOptions {
  /** Port for `start()` when not sharing a server (default 0: any free port). */
  port?: number
  /** Interface (default 127.0.0.1). */
  host?: string
  /** Path the upgrade must target (default `/mcp`, so it can share the Streamable HTTP endpoint). */
  path?: string
  /** Largest incoming frame in bytes; larger closes the socket with 1009 (default 4 MiB). */
  maxFrameBytes?: number
  /** Origins allowed to connect (default: the loopback names on any port); requests without Origin pass. */
  allowedOrigins?: readonly string[]
  /** Host header values allowed (default: the loopback names on any port when `host` is loopback; no check otherwise). */
  allowedHosts?: readonly string[]
  /** Decides on the upgrade request (a bearer token, a cookie); false answers 401. */
  authenticate?: (request: IncomingMessage) => boolean | Promise<boolean>
  /**
   * Authorization (default none), as on the HTTP listener. The upgrade is authenticated: a refused
   * one gets the authenticator's answer (401 with its challenge); the principal it returns is every
   * request's `ctx.principal` on that socket. Then every message is authorized by the rule of the
   * HTTP listener (`authorizeMessage`: scopes per operation, and the token's expiry): a refused
   * request is answered with a JSON-RPC error carrying its id (-32003, `data.error`
   * `insufficient_scope` with `requiredScopes` and `missingScopes`, or `invalid_token`), and the
   * socket lives on. When the token expires (`principal.expiresAt`, on the `scheduler`'s clock)
   * the socket is closed with 1008 (policy violation) and reason `token expired`; the client
   * reconnects with a fresh token. `bearerAuth` from `rxmcp/auth` makes one.
   */
  auth?: Authenticator
  /** Ping interval in ms; a peer that has not answered the previous ping by the next one is closed (default 30,000; 0 off). */
  heartbeatMs?: number
  /** Bytes queued on a socket above which `send` returns a Promise that waits for them to drain (default 1 MiB). */
  highWaterMark?: number
  /**
   * Most sockets open at once (default 10,000). At the cap, the least recently active socket with no
   * request in flight is closed (1001) if it has been idle `sessionEvictionMinIdle`; otherwise the upgrade
   * is answered 503.
   */
  maxSessions?: number
  /**
   * Milliseconds a socket may go without the client sending anything, with no request in flight,
   * before it is closed with 1001 (default 30 minutes; 0 never).
   */
  sessionIdleTimeout?: number
  /** Least idle time of a socket closed to make room at `maxSessions` (default 60,000 ms). */
  sessionEvictionMinIdle?: number
  /** Where time comes from for heartbeats and idle clocks (default `asyncScheduler`). */
  scheduler?: SchedulerLike
}

/** DEFAULTS of {@link WebSocketServerOptions}. */
export const WEBSOCKET_DEFAULTS = {
  host: '127.0.0.1', path: '/mcp', maxFrameBytes: DEFAULT_MAX_MESSAGE_SIZE, heartbeatMs: 30_000, highWaterMark: 1 << 20,
  maxSessions: 10_000, sessionIdleTimeout: 30 * 60_000, sessionEvictionMinIdle: 60_000,
} as const

/** A WebSocket listener: one session per socket. */
export interface McpWebSocketServer extends TransportServer {
  /** Listens alone on host:port. */
  start(): Promise<void>
  /** Serves upgrades arriving at an existing node:http server (the Streamable HTTP one, say). */
  attach(server: HttpServer): void
  /** Handles one upgrade request yourself. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void
  /** `ws://host:port/path` once started. */
  readonly url: string | undefined
  readonly sessionCount: number
  close(): Promise<void>
}

/**
 * A WebSocket server for MCP (a custom transport: JSON-RPC messages and the lifecycle unchanged).
 * One JSON-RPC message per frame; the subprotocol picks JSON text or msgpack binary (msgpack only
 * when the client offers it). Origin is checked as for HTTP, frames are size-limited, an
 * `authenticate` hook sees the upgrade, and heartbeats close dead peers.
 *
 * @example
 * const ws = websocket({ port: 3001 })
 * await server.listen(ws)   // ws://127.0.0.1:3001/mcp
 */
export function websocket(options: WebSocketServerOptions = {}): McpWebSocketServer {
  return new WsTransportServer(options)
}


/** WebSocket ready states (the same numbers in ws and in the WHATWG API). */
const OPEN = 1
const CLOSED = 3

class WsTransportServer implements McpWebSocketServer {
  readonly #options: WebSocketServerOptions
  readonly #connections = new Subject<Transport>()
  readonly connections: Observable<Transport> = this.#connections.asObservable()
  /** The ws server, made on the first upgrade (ws loads then, not when rxmcp is imported). */
  #wss: Promise<WebSocketServer> | undefined
  readonly #sockets = new Set<WsTransport>()
  #http: HttpServer | undefined
  #url: string | undefined
  readonly #scheduler: SchedulerLike
  /** The heartbeat and the idle sweep. */
  readonly #timers = new Subscription()

  constructor(options: WebSocketServerOptions) {
    this.#options = options
    this.#scheduler = options.scheduler ?? asyncScheduler
    const heartbeat = options.heartbeatMs ?? WEBSOCKET_DEFAULTS.heartbeatMs
    if (heartbeat > 0) this.#timers.add(every(heartbeat, options.scheduler, () => { for (const socket of this.#sockets) socket.heartbeat() }))
    const idle = options.sessionIdleTimeout ?? WEBSOCKET_DEFAULTS.sessionIdleTimeout
    if (idle > 0) {
      // Checked a few times per timeout, so a socket overstays by at most a quarter of it.
      this.#timers.add(every(Math.max(10, Math.min(idle / 4, 60_000)), options.scheduler, () => {
        const now = this.#scheduler.now()
        for (const socket of this.#sockets) if (!socket.hasRequestInFlight() && now - socket.lastSeen >= idle) this.#drop(socket, 'idle timeout')
      }))
    }
  }

  /**
   * The ws server, loading ws (and msgpackr, an optional peer) on first use. msgpack is chosen
   * only when the client offers it and msgpackr is installed; otherwise JSON, if offered.
   */
  #server(): Promise<WebSocketServer> {
    this.#wss ??= Promise.all([import('ws'), loadMsgpack().catch(() => undefined)]).then(([{ WebSocketServer }]) => new WebSocketServer({
      noServer: true,
      maxPayload: this.#options.maxFrameBytes ?? WEBSOCKET_DEFAULTS.maxFrameBytes,
      perMessageDeflate: false,
      handleProtocols: protocols => protocols.has(WS_SUBPROTOCOL.msgpack) && isMsgpackLoaded() ? WS_SUBPROTOCOL.msgpack
        : protocols.has(WS_SUBPROTOCOL.json) ? WS_SUBPROTOCOL.json : false,
    }))
    return this.#wss
  }

  /** Closes a socket with 1001 and stops counting it at once. */
  #drop(socket: WsTransport, reason: string): void {
    this.#sockets.delete(socket)
    socket.closeWith(1001, reason)
  }

  /**
   * Makes room for one more socket at the cap: true when there was room or a socket was evicted,
   * else the seconds until the least recently active socket could be (for Retry-After).
   */
  #makeRoom(): true | number {
    if (this.#sockets.size < (this.#options.maxSessions ?? WEBSOCKET_DEFAULTS.maxSessions)) return true
    const minIdle = this.#options.sessionEvictionMinIdle ?? WEBSOCKET_DEFAULTS.sessionEvictionMinIdle
    const now = this.#scheduler.now()
    let candidate: WsTransport | undefined
    for (const socket of this.#sockets) {
      if (socket.hasRequestInFlight()) continue
      if (candidate === undefined || socket.lastSeen < candidate.lastSeen) candidate = socket
    }
    if (candidate === undefined || now - candidate.lastSeen < minIdle) return Math.max(1, Math.ceil((candidate === undefined ? minIdle : minIdle - (now - candidate.lastSeen)) / 1000))
    this.#drop(candidate, 'evicted: the server is full')
    return true
  }



  get url(): string | undefined { return this.#url }
  get sessionCount(): number { return this.#sockets.size }

  async start(): Promise<void> {
    if (this.#http !== undefined) return
    const host = this.#options.host ?? WEBSOCKET_DEFAULTS.host
    const { createServer: createHttpServer } = await import('node:http')
    const http = createHttpServer((_req, res) => { res.statusCode = 426; res.end('Upgrade Required') })
    this.#http = http
    this.attach(http)
    const port = await listenOn(http, this.#options.port ?? 0, host)
    this.#url = `ws://${urlHost(host)}:${port}${this.#options.path ?? WEBSOCKET_DEFAULTS.path}`
  }

  attach(server: HttpServer): void {
    server.on('upgrade', (request, socket, head) => this.handleUpgrade(request, socket, head))
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    void this.#upgrade(request, socket, head).catch(() => socket.destroy())
  }

  async #upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const path = (request.url ?? '/').split('?')[0]
    if (path !== (this.#options.path ?? WEBSOCKET_DEFAULTS.path)) return refuse(socket, 404, 'Not Found')
    const origin = request.headers.origin
    if (origin !== undefined && !isAllowedOrigin(origin, this.#options.allowedOrigins)) return refuse(socket, 403, 'Forbidden')
    if (isCrossSiteWithoutOrigin(request.headers)) return refuse(socket, 403, 'Forbidden')
    // DNS rebinding: a loopback server answers only to the loopback names.
    if (!isAllowedHost(request.headers.host, this.#options.allowedHosts, this.#options.host ?? WEBSOCKET_DEFAULTS.host)) return refuse(socket, 403, 'Forbidden')
    if (this.#options.authenticate !== undefined && !(await this.#options.authenticate(request))) return refuse(socket, 401, 'Unauthorized')
    let authorization: SocketAuthorization | undefined
    if (this.#options.auth !== undefined) {
      const authRequest = upgradeRequest(request, path)
      const outcome = await this.#options.auth.authenticate(authRequest)
      if (outcome.type === 'refuse') return refuseWith(socket, outcome.answer)
      authorization = { auth: this.#options.auth, principal: outcome.principal, request: authRequest }
    }
    const wss = await this.#server()
    // Checked after the await and right before the (synchronous) handshake, so no upgrade slips past the cap.
    const room = this.#makeRoom()
    if (room !== true) return refuse(socket, 503, 'Service Unavailable', `Retry-After: ${room}\r\n`)
    wss.handleUpgrade(request, socket, head, ws => {
      const transport = new WsTransport(ws, ws.protocol === WS_SUBPROTOCOL.msgpack, this.#options.maxFrameBytes ?? WEBSOCKET_DEFAULTS.maxFrameBytes, this.#options.highWaterMark ?? WEBSOCKET_DEFAULTS.highWaterMark, this.#scheduler, request.socket.remoteAddress, authorization)
      this.#sockets.add(transport)
      ws.once('close', () => this.#sockets.delete(transport))
      this.#connections.next(transport)
    })
  }

  async close(): Promise<void> {
    this.#timers.unsubscribe()
    for (const socket of this.#sockets) socket.ws.close(1001, 'server closing')
    this.#connections.complete()
    void this.#wss?.then(wss => wss.close())
    if (this.#http !== undefined) await closeServer(this.#http)
  }
}

function refuse(socket: Duplex, status: number, text: string, headers = ''): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\n${headers}Content-Length: 0\r\n\r\n`)
}

/** An authenticator's refusal written on the raw socket of an upgrade. */
function refuseWith(socket: Duplex, answer: AuthAnswer): void {
  const body = Buffer.from(answer.body)
  // Header values come from the authenticator; CR and LF would split the response.
  const headers = Object.entries(answer.headers).map(([name, value]) => `${name}: ${value.replace(/[\r\n]/g, ' ')}\r\n`).join('')
  socket.end(`HTTP/1.1 ${answer.status} ${STATUS_TEXT[answer.status] ?? 'Refused'}\r\nConnection: close\r\n${headers}Content-Length: ${body.length}\r\n\r\n${answer.body}`)
}

/** Reason phrases of the refusals an authenticator gives (node:http's STATUS_CODES would load node:http with this module). */
const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 429: 'Too Many Requests', 503: 'Service Unavailable' }

/**
 * The upgrade request as an authenticator reads it, at the upgrade and for each message after:
 * its method, path and headers only (a socket keeps these, not the request).
 */
function upgradeRequest(request: IncomingMessage, pathname: string): AuthRequest {
  const method = request.method ?? 'GET'
  const headers = request.headers
  return {
    method,
    pathname,
    header: name => {
      const value = headers[name.toLowerCase()]
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
    },
  }
}

/** Who a socket's messages come from, and what authorizes each of them. */
interface SocketAuthorization {
  readonly auth: Authenticator
  readonly principal: Principal
  /** The upgrade request, handed to the authenticator with each message. */
  readonly request: AuthRequest
}

/** How a socket is closed when its token expires: 1008 policy violation (RFC 6455 §7.4.1). */
const TOKEN_EXPIRED = { code: 1008, reason: 'token expired' } as const

/** Longest wait one timer can take (Node fires a longer one at once); a later deadline is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Runs `work` at `dueMs` on the scheduler's clock (at once if past), in steps no timer overflows. */
function at(scheduler: SchedulerLike, dueMs: number, work: () => void): Subscription {
  const subscription = new Subscription()
  const arm = (): void => {
    const wait = dueMs - scheduler.now()
    if (wait <= 0) work()
    else subscription.add(scheduler.schedule(arm, Math.min(wait, MAX_TIMER_MS)))
  }
  subscription.add(scheduler.schedule(arm, 0))
  return subscription
}

/**
 * Calls `tick` every `ms`: on the given scheduler, or else on a Node timer that does not hold the
 * process open (a listener nobody closed must not keep it alive).
 */
function every(ms: number, scheduler: SchedulerLike | undefined, tick: () => void): Subscription {
  if (scheduler !== undefined) return interval(ms, scheduler).subscribe(tick)
  const timer = setInterval(tick, ms)
  timer.unref()
  return new Subscription(() => clearInterval(timer))
}

/** One server-side socket as a transport. */
class WsTransport implements Transport {
  readonly kind = 'websocket'
  readonly inbound: Observable<Inbound>
  /** False when a ping went unanswered; the next heartbeat then closes the socket. */
  #isAlive = true
  #isClosing = false
  /** When the client last sent a message (scheduler time): the idle clock. */
  lastSeen: number
  /** The client's requests that have no answer yet. */
  readonly #inFlight = new Set<RequestId>()

  constructor(readonly ws: WebSocket, readonly isMsgpack: boolean, readonly maxFrameBytes: number, readonly highWaterMark: number, readonly scheduler: SchedulerLike, readonly remoteAddress: string | undefined, authorization: SocketAuthorization | undefined) {
    this.lastSeen = scheduler.now()
    ws.on('pong', () => { this.#isAlive = true })
    const principal = authorization?.principal
    // A token checked at the upgrade does not stay valid: at its expiry the socket ends, as HTTP
    // would answer 401 from then on (messages that arrive before the close are refused below).
    const expiry = principal?.expiresAt === undefined ? undefined : at(scheduler, principal.expiresAt * 1000, () => this.closeWith(TOKEN_EXPIRED.code, TOKEN_EXPIRED.reason))
    const incoming = new Subject<Inbound>()
    // Messages can arrive before the connection subscribes; a Subject fed now would lose them.
    const early: Inbound[] = []
    let subscriber: Subject<Inbound> | undefined
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data
      const item: Inbound = isBinary ? decodeMsgpackFrame(bytes, maxFrameBytes) : decodeJsonFrame(bytes, maxFrameBytes)
      this.lastSeen = scheduler.now()
      if (authorization !== undefined && item.type === 'message') {
        // Every message passes the rule every HTTP POST passes; a refused one never reaches the server.
        const verdict = authorizeMessage(authorization.auth, authorization.principal, item.message, this.lastSeen, authorization.request)
        if (verdict.type === 'refuse') return this.#refuse(item.message, verdict.error)
        // The decoded item is this frame's own: the sender goes on it, no copy per message.
        item.principal = authorization.principal
      }
      if (item.type === 'message') this.#track(item.message)
      if (subscriber === undefined) early.push(item)
      else subscriber.next(item)
    })
    let closeInfo: { code: number; reason: string } | undefined
    ws.on('close', (code, reason) => {
      expiry?.unsubscribe()
      closeInfo = { code, reason: reason.toString() }
      if (subscriber === undefined) return
      if (this.#isClosing || code === 1000) subscriber.complete()
      else subscriber.error(new ConnectionClosedError(`The WebSocket closed (${code}${reason.length ? ` ${reason}` : ''})`))
    })
    ws.on('error', () => { /* 'close' follows and reports it */ })
    this.inbound = new Observable<Inbound>(observer => {
      if (subscriber !== undefined) { observer.error(new TransportError('A WebSocket transport can be read once')); return }
      subscriber = incoming
      const subscription = incoming.subscribe(observer)
      for (const item of early.splice(0)) incoming.next(item)
      if (closeInfo !== undefined) {
        if (this.#isClosing || closeInfo.code === 1000) incoming.complete()
        else incoming.error(new ConnectionClosedError(`The WebSocket closed (${closeInfo.code})`))
      }
      return subscription
    })
  }

  /** Notes the requests a message from the client opens, and the ones its cancellations close. */
  #track(payload: unknown): void {
    for (const message of Array.isArray(payload) ? payload : [payload]) {
      if (typeof message !== 'object' || message === null) continue
      const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } }
      if (typeof method !== 'string') continue
      if (typeof id === 'string' || typeof id === 'number') this.#inFlight.add(id)
      else if (method === 'notifications/cancelled' && (typeof params?.requestId === 'string' || typeof params?.requestId === 'number')) this.#inFlight.delete(params.requestId)
    }
  }

  /**
   * Answers each request of a refused payload with `error` and its id (a batch with a batch), and
   * drops its notifications and responses; the socket stays open.
   */
  #refuse(payload: unknown, error: JsonRpcErrorObject): void {
    const answers: JsonRpcErrorResponse[] = []
    for (const message of Array.isArray(payload) ? payload : [payload]) {
      if (typeof message !== 'object' || message === null) continue
      const { id, method } = message as { id?: unknown; method?: unknown }
      if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) answers.push({ jsonrpc: '2.0', id, error })
    }
    if (answers.length === 0) return
    try {
      void Promise.resolve(this.send(Array.isArray(payload) ? answers : answers[0]!)).catch(() => { /* closed meanwhile */ })
    } catch { /* closed meanwhile */ }
  }

  hasRequestInFlight(): boolean {
    return this.#inFlight.size > 0
  }

  /** Closes with a code of the server's choosing (1001 for idle and eviction); inbound completes. */
  closeWith(code: number, reason: string): void {
    this.#isClosing = true
    try { this.ws.close(code, reason) } catch { this.ws.terminate() }
    setTimeout(() => this.ws.terminate(), 2000).unref()
  }

  heartbeat(): void {
    if (!this.#isAlive) { this.ws.terminate(); return }
    this.#isAlive = false
    try { this.ws.ping() } catch { /* closing */ }
  }

  send(payload: JsonRpcPayload): void | Promise<void> {
    if (this.ws.readyState !== OPEN) throw new TransportError('The WebSocket is not open')
    if (this.#inFlight.size > 0) {
      for (const message of Array.isArray(payload) ? payload : [payload]) if (!('method' in message) && 'id' in message && message.id !== null) this.#inFlight.delete(message.id)
    }
    const data = this.isMsgpack ? encodeMsgpack(payload) : JSON.stringify(payload)
    // Below the high-water mark, fire and forget; above it the caller waits for the queue to drain.
    if (this.ws.bufferedAmount < this.highWaterMark) { this.ws.send(data); return }
    // A peer that does not read what we send must not make us buffer without bound: stop reading
    // its requests (so no new work is made for it) until the queue has drained.
    this.#pauseReading()
    return new Promise((resolve, reject) => this.ws.send(data, error => {
      if (this.ws.bufferedAmount < this.highWaterMark / 2) this.#resumeReading()
      if (error) reject(new TransportError('WebSocket write failed', { cause: error }))
      else resolve()
    }))
  }

  #isPaused = false

  #pauseReading(): void {
    if (this.#isPaused) return
    this.#isPaused = true
    ;(this.ws as unknown as { _socket?: { pause(): void } })._socket?.pause()
  }

  #resumeReading(): void {
    if (!this.#isPaused) return
    this.#isPaused = false
    ;(this.ws as unknown as { _socket?: { resume(): void } })._socket?.resume()
  }

  /** Bytes queued on the socket now (for tests and monitoring). */
  get bufferedAmount(): number { return this.ws.bufferedAmount }

  async close(): Promise<void> {
    if (this.#isClosing) return
    this.#isClosing = true
    if (this.ws.readyState === CLOSED) return
    await new Promise<void>(resolve => {
      this.ws.once('close', () => resolve())
      this.ws.close(1000, 'closing')
      // A peer that never completes the closing handshake is cut off.
      setTimeout(() => { this.ws.terminate(); resolve() }, 2000).unref()
    })
  }
}

// The client moved to websocket-client.ts (no Node-only imports there); re-exported here for existing imports.
export { websocketClient, WEBSOCKET_CLIENT_DEFAULTS } from './websocket-client.ts'
export type { WebSocketClientOptions, WebSocketConstructor, WebSocketLike } from './websocket-client.ts'
