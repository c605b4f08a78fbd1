import { asyncScheduler, Observable, Subject, type SchedulerLike } from '../lib/rx.ts'
import type { Inbound, Transport } from '../lib/transport.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, FrameTooLargeError, TransportError } from '../lib/jsonrpc/errors.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { decodeMsgpackFrame, encodeMsgpack, loadMsgpack } from '../lib/codec/msgpack.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'
import { credentialContext, type AuthorizationContext } from '../lib/authorization-context.ts'
import { after } from './timers.ts'

/**
 * WebSocket subprotocols: `mcp` is JSON in text frames (what the official SDK v1's
 * WebSocketClientTransport speaks); `mcp.msgpack` is msgpack in binary frames.
 */
export const WS_SUBPROTOCOL = { json: 'mcp', msgpack: 'mcp.msgpack' } as const

/**
 * The part of the WHATWG WebSocket the client uses. A browser's, a worker's or Node 22's global
 * `WebSocket` has it, and so does the `ws` package's.
 */
export interface WebSocketLike {
  readonly readyState: number
  readonly bufferedAmount: number
  binaryType: string
  send(data: string | Uint8Array): void
  close(code?: number, reason?: string): void
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: never) => void): void
}

/** A WebSocket constructor: `globalThis.WebSocket` or anything shaped like it. */
export type WebSocketConstructor = new (url: string, protocols: string[]) => WebSocketLike

/** Options of {@link websocketClient}. */
export interface WebSocketClientOptions {
  /** `json` (subprotocol `mcp`, default) or `msgpack` (subprotocol `mcp.msgpack`). */
  encoding?: 'json' | 'msgpack'
  /**
   * Headers on the upgrade request (an Authorization header, say). Only the `ws` package (the Node
   * default) can send them: with a WHATWG WebSocket (a browser's, or one given in `WebSocket`) the
   * connection fails with a TransportError saying so. A function is called for each connection
   * (a fresh access token, say: `oauthWebSocketHeaders` from `rxmcp/auth/client`).
   */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>)
  /** Largest incoming frame in bytes (default 4 MiB). Under Node `ws` refuses a larger frame while reading it (close 1009). */
  maxFrameBytes?: number
  /**
   * Bounds on each incoming message's nesting and members, JSON and msgpack alike (default
   * `STRUCTURE_DEFAULTS`: 128 levels, 100,000 members), checked before it is parsed: a response
   * past them fails the request it answers at once with `StructureLimitError`, and the socket
   * serves on.
   */
  structureLimits?: StructureLimits
  /** Bytes queued on the socket above which `send` returns a Promise that waits for them to drain (default 1 MiB). */
  highWaterMark?: number
  /**
   * The WebSocket constructor (default: the `ws` package under Node, loaded on first use, and the
   * global `WebSocket` everywhere else: browsers, workers, Deno).
   */
  WebSocket?: WebSocketConstructor
  /**
   * Where the client's time comes from (default RxJS's `asyncScheduler`, real time): the checks of
   * a full send queue, and the cut-off of a peer that never completes the closing handshake (2 s,
   * on a timer that does not hold the process open when no scheduler is given). A test passes a
   * virtual one and moves time itself.
   */
  scheduler?: SchedulerLike
}

/** DEFAULTS of {@link WebSocketClientOptions}. */
export const WEBSOCKET_CLIENT_DEFAULTS = { encoding: 'json', maxFrameBytes: DEFAULT_MAX_MESSAGE_SIZE, highWaterMark: 1 << 20 } as const

/** WHATWG readyState values. */
const OPEN = 1
const CLOSED = 3
/** How often a full socket is looked at again while a sender waits for it to drain. */
const DRAIN_POLL_MS = 10

/**
 * A WebSocket client transport, for Node, browsers and workers. One JSON-RPC message per frame: JSON
 * text frames (subprotocol `mcp`) or msgpack binary frames (`mcp.msgpack`).
 *
 * It connects at once. `inbound` emits each frame decoded, completes when the socket closes cleanly
 * (code 1000, or after `close()`), and errors with `TransportError` when the connection cannot be
 * made and with `ConnectionClosedError` when an open socket drops; requests in flight then fail at
 * once (connect again for a fresh session). `send` waits for the socket to open, and returns a
 * Promise while more than `highWaterMark` bytes are queued.
 *
 * Under Node it uses the `ws` package, imported only then (a bundler for the browser leaves it out);
 * elsewhere the global `WebSocket`.
 *
 * @example
 * const client = await connect(websocketClient('ws://127.0.0.1:3001/mcp', { encoding: 'msgpack' }), { name: 'me', version: '1' })
 * @see websocket for the server side
 */
export function websocketClient(url: string | URL, options: WebSocketClientOptions = {}): Transport {
  return new WebSocketClient(String(url), options)
}

class WebSocketClient implements Transport {
  readonly kind = 'websocket'
  readonly inbound: Observable<Inbound>
  readonly #url: string
  /** The server's URL (see Transport.url). */
  get url(): string { return this.#url }
  readonly #isMsgpack: boolean
  readonly #maxFrameBytes: number
  /** Bounds on each incoming message's nesting and members (undefined: the defaults). */
  readonly #structureLimits: StructureLimits | undefined
  readonly #highWaterMark: number
  /** The `scheduler` option, as given (undefined: real time). */
  readonly #scheduler: SchedulerLike | undefined
  /** Resolves with the socket once open; rejects when it cannot be opened. */
  readonly #opened: Promise<WebSocketLike>
  /** Set once the socket exists (creating it may wait for `ws` to load). */
  #socket: WebSocketLike | undefined
  /** The connection's subscriber, once it subscribed; what arrives before waits in #early. */
  #subscriber: Subject<Inbound> | undefined
  readonly #early: Inbound[] = []
  /** How the transport ended, kept for a subscriber that comes later: undefined = complete. */
  #end: { error: Error | undefined } | undefined
  #isClosing = false
  /** Resolves when the socket has closed (or never opened). */
  readonly #closed: Promise<void>
  #resolveClosed!: () => void
  /** The Authorization header the upgrade carries, once the headers are known (null without one). */
  #authorization!: Promise<string | null>
  #resolveAuthorization!: (value: string | null) => void

  constructor(url: string, options: WebSocketClientOptions) {
    this.#url = url
    this.#isMsgpack = options.encoding === 'msgpack'
    this.#maxFrameBytes = options.maxFrameBytes ?? WEBSOCKET_CLIENT_DEFAULTS.maxFrameBytes
    this.#structureLimits = options.structureLimits
    this.#highWaterMark = options.highWaterMark ?? WEBSOCKET_CLIENT_DEFAULTS.highWaterMark
    this.#scheduler = options.scheduler
    this.#closed = new Promise(resolve => { this.#resolveClosed = resolve })
    this.#authorization = new Promise(resolve => { this.#resolveAuthorization = resolve })
    this.#opened = this.#open(options)
    // A failure reaches the caller through inbound and send; this only keeps it from going unhandled.
    this.#opened.catch(() => {})
    this.inbound = new Observable<Inbound>(observer => {
      if (this.#subscriber !== undefined) { observer.error(new TransportError('A WebSocket transport can be read once')); return }
      const subject = new Subject<Inbound>()
      this.#subscriber = subject
      const subscription = subject.subscribe(observer)
      for (const item of this.#early.splice(0)) subject.next(item)
      if (this.#end !== undefined) this.#finish(this.#end.error)
      return subscription
    })
  }

  /**
   * The authorization context of this socket's requests (MCP 2026-07-28 caching): the one of the
   * Authorization header its upgrade carried (the headers are read once, when it connects).
   */
  async authorizationContext(): Promise<AuthorizationContext> {
    return credentialContext(await this.#authorization)
  }

  async #open(options: WebSocketClientOptions): Promise<WebSocketLike> {
    const protocols = [this.#isMsgpack ? WS_SUBPROTOCOL.msgpack : WS_SUBPROTOCOL.json]
    let socket: WebSocketLike
    try {
      // msgpackr is an optional peer: loaded here, so a JSON client never loads it.
      if (this.#isMsgpack) await loadMsgpack()
      const headers = typeof options.headers === 'function' ? await options.headers() : options.headers
      this.#resolveAuthorization(new Headers(headers).get('authorization'))
      const create = await webSocketFactory({ ...options, headers }, this.#maxFrameBytes)
      socket = create(this.#url, protocols)
    } catch (error) {
      // No upgrade, no credential: nothing will be sent in any context.
      this.#resolveAuthorization(null)
      const failure = error instanceof TransportError ? error : new TransportError(`WebSocket connection to ${this.#url} failed`, { cause: error })
      this.#finish(failure)
      this.#resolveClosed()
      throw failure
    }
    this.#socket = socket
    socket.binaryType = 'arraybuffer'
    let isOpen = false
    return new Promise<WebSocketLike>((resolve, reject) => {
      // The detail of the last error event (ws gives one, a browser none), for the failure message.
      let detail: string | undefined
      socket.addEventListener('open', () => { isOpen = true; resolve(socket) })
      socket.addEventListener('error', (event: { message?: unknown }) => {
        if (typeof event?.message === 'string') detail = event.message
      })
      socket.addEventListener('message', (event: { data: unknown }) => this.#receive(event.data))
      socket.addEventListener('close', (event: { code: number; reason: string }) => {
        this.#resolveClosed()
        if (!isOpen) {
          const failure = new TransportError(`WebSocket connection to ${this.#url} failed${detail === undefined ? '' : `: ${detail}`}`)
          reject(failure)
          return this.#finish(this.#isClosing ? undefined : failure)
        }
        if (this.#isClosing || event.code === 1000) return this.#finish(undefined)
        const why = event.reason ? ` ${event.reason}` : detail === undefined ? '' : `: ${detail}`
        this.#finish(new ConnectionClosedError(`The WebSocket closed (${event.code}${why})`))
      })
      // close() called while `ws` was still loading: the socket is closed as soon as it exists.
      if (this.#isClosing) socket.close(1000, 'closing')
    })
  }

  #receive(data: unknown): void {
    if (this.#end !== undefined) return
    let item: Inbound
    if (typeof data === 'string') {
      item = this.#isMsgpack ? { type: 'invalid', error: new TransportError('A text frame on a msgpack connection') } : decodeJsonFrame(data, this.#maxFrameBytes, this.#structureLimits)
    } else {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : undefined
      if (bytes === undefined) return
      item = this.#isMsgpack ? decodeMsgpackFrame(bytes, this.#maxFrameBytes, this.#structureLimits) : decodeJsonFrame(bytes, this.#maxFrameBytes, this.#structureLimits)
    }
    if (item.type === 'invalid' && item.error instanceof FrameTooLargeError) {
      // A browser has already read the frame; refusing it still ends a peer that sends too much.
      this.#finish(new ConnectionClosedError(`The WebSocket peer sent a frame over ${this.#maxFrameBytes} bytes`, { cause: item.error }))
      this.#socket?.close(1000, 'frame too large')
      return
    }
    if (this.#subscriber === undefined) this.#early.push(item)
    else this.#subscriber.next(item)
  }

  /** Ends inbound once: completes it (error undefined) or errors it. */
  #finish(error: Error | undefined): void {
    if (this.#end === undefined) this.#end = { error }
    const subscriber = this.#subscriber
    if (subscriber === undefined || subscriber.closed || subscriber.isStopped) return
    if (this.#end.error === undefined) subscriber.complete()
    else subscriber.error(this.#end.error)
  }

  send(payload: JsonRpcPayload): void | Promise<void> {
    const socket = this.#socket
    if (socket === undefined || socket.readyState < OPEN) return this.#opened.then(open => this.#write(open, payload))
    return this.#write(socket, payload)
  }

  #write(socket: WebSocketLike, payload: JsonRpcPayload): void | Promise<void> {
    if (socket.readyState !== OPEN || this.#isClosing) throw new TransportError('The WebSocket is not open')
    socket.send(this.#isMsgpack ? encodeMsgpack(payload) : JSON.stringify(payload))
    // Below the high-water mark, fire and forget; above it the caller waits for the queue to drain.
    if (socket.bufferedAmount >= this.#highWaterMark) return this.#drained(socket)
  }

  /** Resolves once the queue is below half the high-water mark; rejects if the socket closes first. */
  #drained(socket: WebSocketLike): Promise<void> {
    // A WHATWG WebSocket tells nobody when its queue drains, so it is looked at on a short timer.
    return new Promise((resolve, reject) => {
      const check = () => {
        if (socket.readyState !== OPEN) return reject(new TransportError('The WebSocket closed before its queue drained'))
        if (socket.bufferedAmount < this.#highWaterMark / 2) return resolve()
        scheduler.schedule(check, DRAIN_POLL_MS)
      }
      const scheduler = this.#scheduler ?? asyncScheduler
      scheduler.schedule(check, DRAIN_POLL_MS)
    })
  }

  async close(): Promise<void> {
    if (this.#isClosing) return this.#closed
    this.#isClosing = true
    const socket = this.#socket
    // No socket yet: #open closes it once made (or has failed, which resolved #closed).
    if (socket !== undefined && socket.readyState !== CLOSED) {
      socket.close(1000, 'closing')
      // A peer that never completes the closing handshake is cut off (`ws` can; a browser gives up waiting).
      const cutOff = after(2000, this.#scheduler, () => {
        ;(socket as { terminate?: () => void }).terminate?.()
        this.#resolveClosed()
      })
      void this.#closed.then(() => cutOff.unsubscribe())
    }
    await this.#closed
    this.#finish(undefined)
  }
}

/** Under Node, true: `ws` is used there (it sends headers and bounds a frame while reading it). */
function isNode(): boolean {
  return typeof process !== 'undefined' && typeof process.versions?.node === 'string'
}

/**
 * How sockets are made: the constructor given, else `ws` under Node, else the global WebSocket.
 * `ws` is imported by a name in a variable, so a bundler for the browser neither follows nor ships it.
 */
async function webSocketFactory(options: WebSocketClientOptions & { headers?: Record<string, string> }, maxFrameBytes: number): Promise<(url: string, protocols: string[]) => WebSocketLike> {
  const hasHeaders = options.headers !== undefined && Object.keys(options.headers).length > 0
  if (options.WebSocket !== undefined) {
    if (hasHeaders) throw new TransportError('A WHATWG WebSocket cannot send headers; leave out options.WebSocket (Node uses ws), or use the Streamable HTTP transport (an access token never goes in a URL)')
    const Given = options.WebSocket
    return (url, protocols) => new Given(url, protocols)
  }
  // Why `ws` could not be loaded under Node, for the error when there is no global WebSocket either.
  let wsFailure: unknown
  if (isNode()) {
    const specifier = 'ws'
    const module = await import(/* @vite-ignore */ specifier).catch((error: unknown) => { wsFailure = error; return undefined }) as typeof import('ws') | undefined
    const Ws = module?.WebSocket ?? module?.default
    if (Ws !== undefined) {
      return (url, protocols) => new Ws(url, protocols, { headers: options.headers, maxPayload: maxFrameBytes, perMessageDeflate: false }) as unknown as WebSocketLike
    }
  }
  const Native = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
  if (Native === undefined) {
    throw new TransportError(wsFailure === undefined ? 'No WebSocket in this runtime: pass options.WebSocket' : 'The ws package could not be loaded and this runtime has no global WebSocket', { cause: wsFailure })
  }
  if (hasHeaders) throw new TransportError('This runtime\'s WebSocket cannot send headers; use the Streamable HTTP transport (an access token never goes in a URL)')
  return (url, protocols) => new Native(url, protocols)
}
