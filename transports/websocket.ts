import type { AuthAnswer, AuthRequest, Authenticator } from '../lib/auth.ts'
import type { IncomingMessage, Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import { asyncScheduler, Observable, Subject, Subscription, type SchedulerLike } from '../lib/rx.ts'
import { after, clockOf, every } from './timers.ts'
import type { WebSocketServer } from 'ws'
import { DRAIN_DEFAULTS, type DrainOptions, type Transport, type TransportServer } from '../lib/transport.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'
import { createMemoryRateLimiterStore, type RateLimiterStore, type TokenBucketOptions } from '../lib/token-bucket.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { isMsgpackLoaded, loadMsgpack } from '../lib/codec/msgpack.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'
import { isAllowedHost, isAllowedOrigin, isCrossSiteWithoutOrigin } from './origin.ts'
import { closeServer, listenOn, urlHost } from './listen.ts'
import { WS_SUBPROTOCOL } from './websocket-client.ts'
import { ClientPolicy, DEFAULT_FAILED_AUTH_LIMIT, addressKey, clientKey, isFailedAuthentication, retryAfterSeconds, type ClientRequest } from './client-policy.ts'
import { SessionAdmission, type BudgetRefusal } from './client-budgets.ts'
import { WsTransport, type SocketAuthorization } from './websocket-socket.ts'
import { requestInfo } from './request-info.ts'

/** The WebSocket subprotocols (defined beside the client, which browsers load without this file). */
export { WS_SUBPROTOCOL }
export type { ClientRequest } from './client-policy.ts'
export { memoryRateLimiterStore, createMemoryRateLimiterStore } from '../lib/token-bucket.ts'
export type { RateLimiter, RateLimiterStore, TokenBucketOptions } from '../lib/token-bucket.ts'

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
  /**
   * Bounds on each incoming message's nesting and members, JSON text and msgpack frames alike
   * (default `STRUCTURE_DEFAULTS`: 128 levels, 100,000 members), checked before it is parsed: a
   * message past them is answered -32700 with its id when it could be read, unparsed, and the
   * socket serves on.
   */
  structureLimits?: StructureLimits
  /** Origins allowed to connect (default: the loopback names on any port); requests without Origin pass. */
  allowedOrigins?: readonly string[]
  /** Host header values allowed (default: the loopback names on any port when `host` is loopback; no check otherwise). */
  allowedHosts?: readonly string[]
  /** Decides on the upgrade request (a bearer token, a cookie); false answers 401 (a failed authentication, see `failedAuthLimit`). */
  authenticate?: (request: IncomingMessage) => boolean | Promise<boolean>
  /**
   * Authorization (default none), as on the HTTP listener. The upgrade is authenticated: a refused
   * one gets the authenticator's answer (401 with its challenge); the principal it returns is every
   * request's `ctx.principal` on that socket. Then every message is authorized by the rule of the
   * HTTP listener (`authorizeMessage`: scopes per operation, and the token's expiry): a refused
   * request is answered with a JSON-RPC error carrying its id (-31003, `data.error`
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
   * is answered 503 with Retry-After.
   */
  maxSessions?: number
  /**
   * Most sockets one client holds at once (default 100), as `maxSessionsPerClient` of the HTTP
   * listener: a client is its principal when authenticated, else its address (see `clientAddress`;
   * IPv6 by /64). At it, the client's own least recently active socket with no request in flight
   * is closed (1001) if it has been idle `sessionEvictionMinIdle`; otherwise its upgrade is answered
   * 429 with Retry-After and -31029, while other clients still connect.
   */
  maxSessionsPerClient?: number
  /**
   * Milliseconds a socket may go without the client sending anything, with no request in flight,
   * before it is closed with 1001 (default 30 minutes; 0 never).
   */
  sessionIdleTimeout?: number
  /** Least idle time of a socket closed to make room at `maxSessions` or `maxSessionsPerClient` (default 60,000 ms). */
  sessionEvictionMinIdle?: number
  /**
   * The budget of failed authentications per client address, when `auth` or `authenticate` is set
   * (default 60 at once, refilled at 1 a second; `false` turns it off), as on the HTTP listener:
   * every upgrade refused with a 4xx (a missing, invalid or expired credential) spends a token;
   * past the budget the address's upgrades are answered 429 with Retry-After and -31029 and not
   * verified at all until a token is back, valid credentials included. A 5xx refusal (the verifier
   * cannot decide) and a 429 cost nothing.
   */
  failedAuthLimit?: TokenBucketOptions | false
  /**
   * A request budget per client (default none), as on the HTTP listener: a token bucket per
   * principal (else per client address), one token per request a message carries (each of a
   * batch). A message over budget is refused: each of its requests is answered -31029 with its id
   * and `data.retryAfterMs`, nothing of it reaches the server, and the socket lives on. Clients
   * with neither principal nor address share one bucket. The buckets live in `rateLimiterStore`.
   */
  rateLimit?: TokenBucketOptions
  /**
   * Where the `rateLimit` and `failedAuthLimit` buckets live (default: a store of this listener's
   * own in this process's memory, so a client has one budget here and another on the HTTP
   * listener). Give the HTTP listener's store and a client spends one budget on both: on one
   * port, `websocket({ rateLimiterStore: http.rateLimiterStore })` (in memory or Redis); across
   * instances, `redisScaleOut(url).http.rateLimiterStore`.
   */
  rateLimiterStore?: RateLimiterStore
  /**
   * The client address of an upgrade, for the budgets kept per address and each socket's
   * `remoteAddress` (default: the socket's remote address). Behind a reverse proxy every socket is
   * the proxy's: return the address the proxy wrote (`request => request.header('x-real-ip') ??
   * undefined`), and only for a header that proxy always sets. Undefined falls back to the socket's.
   */
  clientAddress?: (request: ClientRequest) => string | undefined
  /**
   * Where time comes from (default RxJS's `asyncScheduler`, real time): heartbeats, idle clocks,
   * budgets, token expiry and the cut-off of a peer that never completes the closing handshake.
   * Without it the heartbeats, idle sweeps and cut-offs run on timers that do not hold the process
   * open. A test passes a virtual one and moves time itself.
   */
  scheduler?: SchedulerLike
}

/** DEFAULTS of {@link WebSocketServerOptions}. */
export const WEBSOCKET_DEFAULTS = {
  host: '127.0.0.1', path: '/mcp', maxFrameBytes: DEFAULT_MAX_MESSAGE_SIZE, heartbeatMs: 30_000, highWaterMark: 1 << 20,
  maxSessions: 10_000, maxSessionsPerClient: 100, sessionIdleTimeout: 30 * 60_000, sessionEvictionMinIdle: 60_000,
  /** When `auth` or `authenticate` is set: failed authentications per client address. */
  failedAuthLimit: DEFAULT_FAILED_AUTH_LIMIT,
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
  /** Where this listener's `rateLimit` and `failedAuthLimit` buckets live: the option, else the memory store it made. */
  readonly rateLimiterStore: RateLimiterStore
  /**
   * Leaves gracefully (`McpServer.drain` calls it): after `healthGraceMs`, new upgrades are
   * answered 503 with Retry-After (the balancer sends them to another instance); each socket is
   * closed with 1012 (Service Restart, a code clients reconnect on) as soon as it has no request in
   * flight, or at `timeoutMs`; then the listener closes. A WebSocket session is its connection:
   * the client's reconnection starts a new one elsewhere.
   */
  drain(options?: DrainOptions): Promise<void>
  close(): Promise<void>
}

/** The close code a draining listener closes its sockets with: RFC 6455's registry, 1012 Service Restart. */
export const WS_SERVICE_RESTART = 1012

/**
 * A WebSocket server for MCP (a custom transport: JSON-RPC messages and the lifecycle unchanged).
 * One JSON-RPC message per frame; the subprotocol picks JSON text or msgpack binary (msgpack only
 * when the client offers it). Origin is checked as for HTTP, frames are size-limited, an
 * `authenticate` hook sees the upgrade, and heartbeats close dead peers. Per client, the listener
 * applies the HTTP listener's policy: a session cap, a failed-authentication budget on the
 * upgrade, and an optional request budget.
 *
 * @example
 * const ws = websocket({ port: 3001 })
 * await server.listen(ws)   // ws://127.0.0.1:3001/mcp
 */
export function websocket(options: WebSocketServerOptions = {}): McpWebSocketServer {
  return new WsTransportServer(options)
}

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
  /** Who a client is and its budgets (failed authentications, requests): the HTTP listener's rule. */
  readonly #policy: ClientPolicy
  /** The rule admitting a socket (`maxSessionsPerClient`, then `maxSessions`), as for HTTP sessions. */
  readonly #admission: SessionAdmission<WsTransport>
  /** Where the policy's budgets live (the option, else a memory store of this listener's own). */
  readonly #rateLimiterStore: RateLimiterStore
  /** Set by a drain once the balancer had its grace: upgrades are answered 503. */
  #isDraining = false
  /** The drain under way (a second call returns it). */
  #draining: Promise<void> | undefined

  constructor(options: WebSocketServerOptions) {
    this.#options = options
    const scheduler = options.scheduler ?? asyncScheduler
    this.#scheduler = scheduler
    this.#rateLimiterStore = options.rateLimiterStore ?? createMemoryRateLimiterStore()
    this.#policy = new ClientPolicy({
      authenticates: options.auth !== undefined || options.authenticate !== undefined,
      rateLimit: options.rateLimit, failedAuthLimit: options.failedAuthLimit, rateLimiterStore: this.#rateLimiterStore,
      clientAddress: options.clientAddress, now: clockOf(options.scheduler),
    })
    this.#admission = new SessionAdmission<WsTransport>({
      perClient: options.maxSessionsPerClient ?? WEBSOCKET_DEFAULTS.maxSessionsPerClient,
      total: options.maxSessions ?? WEBSOCKET_DEFAULTS.maxSessions,
      minIdle: options.sessionEvictionMinIdle ?? WEBSOCKET_DEFAULTS.sessionEvictionMinIdle,
    }, (socket, reason) => this.#drop(socket, EVICTED[reason]))
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
    this.#forget(socket)
    socket.closeWith(1001, reason)
  }

  /** Stops counting a socket (closed, or closing). */
  #forget(socket: WsTransport): void {
    this.#sockets.delete(socket)
    this.#admission.delete(socket)
  }

  get url(): string | undefined { return this.#url }
  get sessionCount(): number { return this.#sockets.size }
  get rateLimiterStore(): RateLimiterStore { return this.#rateLimiterStore }

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
    const path = (request.url ?? '/').split('?')[0]!
    if (path !== (this.#options.path ?? WEBSOCKET_DEFAULTS.path)) return refuse(socket, 404, 'Not Found')
    if (this.#isDraining) return refuseJson(socket, 503, -32000, 'Service Unavailable: this server instance is shutting down; connect again', 1)
    const origin = request.headers.origin
    if (origin !== undefined && !isAllowedOrigin(origin, this.#options.allowedOrigins)) return refuse(socket, 403, 'Forbidden')
    if (isCrossSiteWithoutOrigin(request.headers)) return refuse(socket, 403, 'Forbidden')
    // DNS rebinding: a loopback server answers only to the loopback names.
    if (!isAllowedHost(request.headers.host, this.#options.allowedHosts, this.#options.host ?? WEBSOCKET_DEFAULTS.host)) return refuse(socket, 403, 'Forbidden')
    const authRequest = upgradeRequest(request, path)
    const address = this.#policy.resolveAddress({ remoteAddress: request.socket.remoteAddress, header: authRequest.header })
    const authorization = await this.#authenticate(request, authRequest, socket, address)
    if (authorization === false) return
    const client = clientKey(authorization?.principal, address)
    const wss = await this.#server()
    // Checked after the awaits and right before the (synchronous) handshake, so no upgrade slips past a cap.
    // Checked again after the awaits: a drain may have started meanwhile.
    if (this.#isDraining) return refuseJson(socket, 503, -32000, 'Service Unavailable: this server instance is shutting down; connect again', 1)
    const refusal = this.#admission.admit(client, this.#sockets, this.#sockets.size, false, this.#scheduler.now())
    if (refusal !== undefined) {
      const seconds = retryAfterSeconds(refusal.retryAfterMs)
      if (refusal.reason === 'client') return refuseJson(socket, 429, ErrorCode.RateLimited, `Too Many Requests: too many sockets of this client; try again in ${seconds} s`, seconds)
      return refuseJson(socket, 503, -32000, `Service Unavailable: too many sockets; try again in ${seconds} s`, seconds)
    }
    const policy = this.#policy
    wss.handleUpgrade(request, socket, head, ws => {
      const transport = new WsTransport(ws, {
        isMsgpack: ws.protocol === WS_SUBPROTOCOL.msgpack,
        maxFrameBytes: this.#options.maxFrameBytes ?? WEBSOCKET_DEFAULTS.maxFrameBytes,
        structureLimits: this.#options.structureLimits,
        highWaterMark: this.#options.highWaterMark ?? WEBSOCKET_DEFAULTS.highWaterMark,
        scheduler: this.#scheduler,
        givenScheduler: this.#options.scheduler,
        remoteAddress: address,
        requestInfo: requestInfo('websocket', request.rawHeaders, address),
        authorization,
        takeRequests: policy.limitsRequests ? count => policy.takeRequests(client, count) : undefined,
      })
      this.#sockets.add(transport)
      this.#admission.add(client, transport)
      ws.once('close', () => this.#forget(transport))
      this.#connections.next(transport)
    })
  }

  /**
   * Authenticates an upgrade (the `authenticate` hook, then `auth`): what authorizes the socket's
   * messages (undefined without `auth`), or false once refused. A refusal that is a failed
   * authentication costs the address a token of its budget; an address with none left is answered
   * 429 and not verified until a token is back.
   */
  async #authenticate(request: IncomingMessage, authRequest: AuthRequest, socket: Duplex, address: string | undefined): Promise<SocketAuthorization | undefined | false> {
    const { auth, authenticate } = this.#options
    if (auth === undefined && authenticate === undefined) return undefined
    // An unknown address is not budgeted (one bucket for all would let one client lock out the rest).
    const key = this.#policy.limitsFailures ? addressKey(address) : undefined
    const blocked = this.#policy.blockedFor(key)
    if (blocked > 0) { refuseFailures(socket, blocked); return false }
    const refused = async (answer: AuthAnswer): Promise<false> => {
      const wait = isFailedAuthentication(answer.status) ? await this.#policy.chargeFailure(key) : 0
      if (wait > 0) refuseFailures(socket, wait)
      else refuseWith(socket, answer)
      return false
    }
    if (authenticate !== undefined && !(await authenticate(request))) return refused(UNAUTHORIZED)
    if (auth === undefined) return undefined
    const outcome = await auth.authenticate(authRequest)
    if (outcome.type === 'refuse') return refused(outcome.answer)
    return { auth, principal: outcome.principal, request: authRequest }
  }

  drain(options: DrainOptions = {}): Promise<void> {
    return this.#draining ??= this.#drain(options)
  }

  async #drain(options: DrainOptions): Promise<void> {
    const graceMs = options.healthGraceMs ?? DRAIN_DEFAULTS.healthGraceMs
    if (graceMs > 0) await this.#wait(graceMs)
    this.#isDraining = true
    options.onProgress?.('websocket: taking no new connections')
    const deadline = this.#scheduler.now() + (options.timeoutMs ?? DRAIN_DEFAULTS.timeoutMs)
    let closed = 0
    // Each socket goes as soon as nothing runs on it (polled, bounded by the deadline): a request
    // ends deep inside the server, so nothing tells this listener when.
    for (;;) {
      const isLate = this.#scheduler.now() >= deadline
      for (const socket of [...this.#sockets]) {
        if (!isLate && socket.hasRequestInFlight()) continue
        this.#forget(socket)
        socket.closeWith(WS_SERVICE_RESTART, 'server restarting')
        closed++
      }
      if (this.#sockets.size === 0 || isLate) break
      await this.#wait(DRAIN_POLL_MS)
    }
    options.onProgress?.(`websocket: connections closed: ${closed}`)
    await this.close()
  }

  /** Resolves after `ms` on the listener's scheduler. */
  #wait(ms: number): Promise<void> {
    return new Promise(resolve => { after(ms, this.#options.scheduler, resolve) })
  }

  async close(): Promise<void> {
    this.#timers.unsubscribe()
    for (const socket of this.#sockets) socket.ws.close(1001, 'server closing')
    this.#connections.complete()
    void this.#wss?.then(wss => wss.close())
    if (this.#http !== undefined) await closeServer(this.#http)
  }
}

/** How often a drain looks again for sockets with nothing in flight. */
const DRAIN_POLL_MS = 20

/** The reason a socket closed to make room is given (1001), by which cap made it give way. */
const EVICTED: Record<BudgetRefusal, string> = { client: 'evicted: too many sockets of this client', total: 'evicted: the server is full' }

/** What the `authenticate` hook's false answers. */
const UNAUTHORIZED: AuthAnswer = { status: 401, headers: {}, body: '' }

function refuse(socket: Duplex, status: number, text: string, headers = ''): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\n${headers}Content-Length: 0\r\n\r\n`)
}

/** A refused upgrade with a JSON-RPC error body (id null) and Retry-After, as the HTTP listener answers. */
function refuseJson(socket: Duplex, status: number, code: number, message: string, retryAfter: number): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } })
  refuseWith(socket, { status, headers: { 'content-type': 'application/json', 'retry-after': String(retryAfter) }, body })
}

/** An upgrade from an address over its failed-authentication budget: 429, Retry-After, -31029. */
function refuseFailures(socket: Duplex, waitMs: number): void {
  const seconds = retryAfterSeconds(waitMs)
  refuseJson(socket, 429, ErrorCode.RateLimited, `Too many failed authentications: try again in ${seconds} s`, seconds)
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

// The client moved to websocket-client.ts (no Node-only imports there); re-exported here for existing imports.
export { websocketClient, WEBSOCKET_CLIENT_DEFAULTS } from './websocket-client.ts'
export type { WebSocketClientOptions, WebSocketConstructor, WebSocketLike } from './websocket-client.ts'
