import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import { Observable, Subject } from 'rxjs'
import { WebSocket, WebSocketServer, type RawData } from 'ws'
import type { Inbound, Transport, TransportServer } from '../lib/transport.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, TransportError } from '../lib/jsonrpc/errors.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { decodeMsgpackFrame, encodeMsgpack } from '../lib/codec/msgpack.ts'
import { isAllowedOrigin } from './origin.ts'
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
  /** Decides on the upgrade request (a bearer token, a cookie); false answers 401. */
  authenticate?: (request: IncomingMessage) => boolean | Promise<boolean>
  /** Ping interval in ms; a peer that has not answered the previous ping by the next one is closed (default 30,000; 0 off). */
  heartbeatMs?: number
  /** Bytes queued on a socket above which `send` returns a Promise that waits for them to drain (default 1 MiB). */
  highWaterMark?: number
}

/** DEFAULTS of {@link WebSocketServerOptions}. */
export const WEBSOCKET_DEFAULTS = { host: '127.0.0.1', path: '/mcp', maxFrameBytes: DEFAULT_MAX_MESSAGE_SIZE, heartbeatMs: 30_000, highWaterMark: 1 << 20 } as const

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


class WsTransportServer implements McpWebSocketServer {
  readonly #options: WebSocketServerOptions
  readonly #connections = new Subject<Transport>()
  readonly connections: Observable<Transport> = this.#connections.asObservable()
  readonly #wss: WebSocketServer
  readonly #sockets = new Set<WsTransport>()
  #http: HttpServer | undefined
  #url: string | undefined
  #heartbeat: ReturnType<typeof setInterval> | undefined

  constructor(options: WebSocketServerOptions) {
    this.#options = options
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxFrameBytes ?? WEBSOCKET_DEFAULTS.maxFrameBytes,
      perMessageDeflate: false,
      handleProtocols: protocols => protocols.has(WS_SUBPROTOCOL.msgpack) ? WS_SUBPROTOCOL.msgpack : protocols.has(WS_SUBPROTOCOL.json) ? WS_SUBPROTOCOL.json : false,
    })
    const heartbeat = options.heartbeatMs ?? WEBSOCKET_DEFAULTS.heartbeatMs
    if (heartbeat > 0) {
      this.#heartbeat = setInterval(() => { for (const socket of this.#sockets) socket.heartbeat() }, heartbeat)
      this.#heartbeat.unref()
    }
  }

  get url(): string | undefined { return this.#url }
  get sessionCount(): number { return this.#sockets.size }

  async start(): Promise<void> {
    if (this.#http !== undefined) return
    const host = this.#options.host ?? WEBSOCKET_DEFAULTS.host
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
    if (this.#options.authenticate !== undefined && !(await this.#options.authenticate(request))) return refuse(socket, 401, 'Unauthorized')
    this.#wss.handleUpgrade(request, socket, head, ws => {
      const transport = new WsTransport(ws, ws.protocol === WS_SUBPROTOCOL.msgpack, this.#options.maxFrameBytes ?? WEBSOCKET_DEFAULTS.maxFrameBytes, this.#options.highWaterMark ?? WEBSOCKET_DEFAULTS.highWaterMark)
      this.#sockets.add(transport)
      ws.once('close', () => this.#sockets.delete(transport))
      this.#connections.next(transport)
    })
  }

  async close(): Promise<void> {
    clearInterval(this.#heartbeat)
    for (const socket of this.#sockets) socket.ws.close(1001, 'server closing')
    this.#connections.complete()
    this.#wss.close()
    if (this.#http !== undefined) await closeServer(this.#http)
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
}

/** One socket as a transport: server side or client side. */
class WsTransport implements Transport {
  readonly kind = 'websocket'
  readonly inbound: Observable<Inbound>
  /** False when a ping went unanswered; the next heartbeat then closes the socket. */
  #isAlive = true
  #isClosing = false

  constructor(readonly ws: WebSocket, readonly isMsgpack: boolean, readonly maxFrameBytes: number, readonly highWaterMark: number) {
    ws.on('pong', () => { this.#isAlive = true })
    const incoming = new Subject<Inbound>()
    // Messages can arrive before the connection subscribes; a Subject fed now would lose them.
    const early: Inbound[] = []
    let subscriber: Subject<Inbound> | undefined
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data
      const item: Inbound = isBinary ? decodeMsgpackFrame(bytes, maxFrameBytes) : decodeJsonFrame(bytes, maxFrameBytes)
      if (subscriber === undefined) early.push(item)
      else subscriber.next(item)
    })
    let closeInfo: { code: number; reason: string } | undefined
    ws.on('close', (code, reason) => {
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

  heartbeat(): void {
    if (!this.#isAlive) { this.ws.terminate(); return }
    this.#isAlive = false
    try { this.ws.ping() } catch { /* closing */ }
  }

  send(payload: JsonRpcPayload): void | Promise<void> {
    if (this.ws.readyState !== WebSocket.OPEN) throw new TransportError('The WebSocket is not open')
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
    if (this.ws.readyState === WebSocket.CLOSED) return
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
