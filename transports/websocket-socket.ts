/**
 * One server-side WebSocket as a Transport (the listener is websocket.ts): frames in and out, the
 * rule every inbound message passes (authorization, then the request budget), the requests in
 * flight (the idle clock spares a socket waiting on one), backpressure, and the token's expiry.
 */
import { authorizeMessage, type AuthRequest, type Authenticator, type Principal } from '../lib/auth.ts'
import { Observable, Subject, type SchedulerLike } from '../lib/rx.ts'
import type { WebSocket, RawData } from 'ws'
import type { Inbound, RequestInfo, Transport } from '../lib/transport.ts'
import type { JsonRpcErrorObject, JsonRpcErrorResponse, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, ErrorCode, TransportError } from '../lib/jsonrpc/errors.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { decodeMsgpackFrame, encodeMsgpack } from '../lib/codec/msgpack.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'
import { requestsOf } from './http-ids.ts'
import { retryAfterSeconds } from './client-policy.ts'
import { at, expiryOf } from './token-expiry.ts'
import { after } from './timers.ts'

/** Who a socket's messages come from, and what authorizes each of them. */
export interface SocketAuthorization {
  readonly auth: Authenticator
  readonly principal: Principal
  /** The upgrade request, handed to the authenticator with each message. */
  readonly request: AuthRequest
}

/** What one socket is given by its listener. */
export interface SocketSettings {
  readonly isMsgpack: boolean
  readonly maxFrameBytes: number
  /** Bounds on each message's nesting and members (undefined: `STRUCTURE_DEFAULTS`). */
  readonly structureLimits: StructureLimits | undefined
  readonly highWaterMark: number
  readonly scheduler: SchedulerLike
  /** The listener's `scheduler` option as given: the closing cut-off runs on it, else on a timer that does not hold the process open. */
  readonly givenScheduler: SchedulerLike | undefined
  /** The client's address (the listener's `clientAddress` behind a proxy; else the socket's). */
  readonly remoteAddress: string | undefined
  /** The upgrade request's headers and the client's address: every message's `ctx.requestInfo`. */
  readonly requestInfo: RequestInfo
  readonly authorization: SocketAuthorization | undefined
  /**
   * The request budget of the socket's client (`rateLimit`): takes `count` tokens, answering 0 when
   * taken, else the ms until they would be there; a Promise when the budget lives in Redis.
   */
  readonly takeRequests: ((count: number) => number | Promise<number>) | undefined
}

/** How a socket is closed when its token expires: 1008 policy violation (RFC 6455 §7.4.1). */
const TOKEN_EXPIRED = { code: 1008, reason: 'token expired' } as const

/** How long a peer gets to complete the closing handshake before it is cut off. */
const CUT_OFF_MS = 2000

/** WebSocket ready states (the same numbers in ws and in the WHATWG API). */
const OPEN = 1
const CLOSED = 3

/** Why reading a socket is paused: its peer does not read what is sent, or a budget answer is awaited. */
type PauseReason = 'drain' | 'budget'

/** One server-side socket as a transport. */
export class WsTransport implements Transport {
  readonly kind = 'websocket'
  readonly inbound: Observable<Inbound>
  readonly ws: WebSocket
  readonly isMsgpack: boolean
  readonly highWaterMark: number
  readonly remoteAddress: string | undefined
  readonly #scheduler: SchedulerLike
  /** See SocketSettings.givenScheduler. */
  readonly #givenScheduler: SchedulerLike | undefined
  readonly #authorization: SocketAuthorization | undefined
  /** One for the socket: its messages all came over the one upgrade. */
  readonly #requestInfo: RequestInfo
  readonly #takeRequests: ((count: number) => number | Promise<number>) | undefined
  /** False when a ping went unanswered; the next heartbeat then closes the socket. */
  #isAlive = true
  #isClosing = false
  /** When the client last sent a message (scheduler time): the idle clock. */
  lastSeen: number
  /** The client's requests that have no answer yet. */
  readonly #inFlight = new Set<RequestId>()
  /** Messages that arrived before the connection subscribed (a Subject fed now would lose them). */
  readonly #early: Inbound[] = []
  #subscriber: Subject<Inbound> | undefined
  /**
   * Set while the request budget (in Redis) is being asked about a message: the messages that
   * arrived meanwhile wait here, in order, and reading is paused so that they stay few.
   */
  #held: Inbound[] | undefined
  readonly #pausedFor = new Set<PauseReason>()

  constructor(ws: WebSocket, settings: SocketSettings) {
    this.ws = ws
    this.isMsgpack = settings.isMsgpack
    this.highWaterMark = settings.highWaterMark
    this.remoteAddress = settings.remoteAddress
    this.#scheduler = settings.scheduler
    this.#givenScheduler = settings.givenScheduler
    this.#authorization = settings.authorization
    this.#requestInfo = settings.requestInfo
    this.#takeRequests = settings.takeRequests
    const { maxFrameBytes, structureLimits, scheduler } = settings
    this.lastSeen = scheduler.now()
    ws.on('pong', () => { this.#isAlive = true })
    // A token checked at the upgrade does not stay valid: at its expiry the socket ends, as HTTP
    // would answer 401 from then on (messages that arrive before the close are refused below).
    const expiresAt = expiryOf(settings.authorization?.principal)
    const expiry = expiresAt === undefined ? undefined : at(scheduler, expiresAt, () => this.closeWith(TOKEN_EXPIRED.code, TOKEN_EXPIRED.reason))
    const incoming = new Subject<Inbound>()
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data
      const item: Inbound = isBinary ? decodeMsgpackFrame(bytes, maxFrameBytes, structureLimits) : decodeJsonFrame(bytes, maxFrameBytes, structureLimits)
      this.lastSeen = scheduler.now()
      if (this.#held !== undefined) this.#held.push(item)
      else this.#accept(item)
    })
    let closeInfo: { code: number; reason: string } | undefined
    ws.on('close', (code, reason) => {
      expiry?.unsubscribe()
      closeInfo = { code, reason: reason.toString() }
      const subscriber = this.#subscriber
      if (subscriber === undefined) return
      if (this.#isClosing || code === 1000) subscriber.complete()
      else subscriber.error(new ConnectionClosedError(`The WebSocket closed (${code}${reason.length ? ` ${reason}` : ''})`))
    })
    ws.on('error', () => { /* 'close' follows and reports it */ })
    this.inbound = new Observable<Inbound>(observer => {
      if (this.#subscriber !== undefined) { observer.error(new TransportError('A WebSocket transport can be read once')); return }
      this.#subscriber = incoming
      const subscription = incoming.subscribe(observer)
      for (const item of this.#early.splice(0)) incoming.next(item)
      if (closeInfo !== undefined) {
        if (this.#isClosing || closeInfo.code === 1000) incoming.complete()
        else incoming.error(new ConnectionClosedError(`The WebSocket closed (${closeInfo.code})`))
      }
      return subscription
    })
  }

  /**
   * The rule every message passes before the server sees it, as every HTTP POST does: first its
   * authorization (scopes per operation, the token's expiry), then the client's request budget
   * (one token per request). A refused payload's requests are answered with an error and their
   * ids; the socket lives on.
   */
  #accept(item: Inbound): void {
    if (item.type === 'message') {
      // The decoded item is this frame's own: what came with it goes on it, no copy per message.
      item.requestInfo = this.#requestInfo
      const authorization = this.#authorization
      if (authorization !== undefined) {
        const verdict = authorizeMessage(authorization.auth, authorization.principal, item.message, this.#scheduler.now(), authorization.request)
        if (verdict.type === 'refuse') return this.#refuse(item.message, verdict.error)
        item.principal = authorization.principal
      }
      const count = this.#takeRequests === undefined ? 0 : requestsOf(item.message).ids.length
      if (count > 0) {
        const wait = this.#takeRequests!(count)
        if (typeof wait !== 'number') return this.#awaitBudget(item, wait)
        if (wait > 0) return this.#refuse(item.message, rateLimited(wait))
      }
    }
    this.#deliver(item)
  }

  /** A budget kept in Redis answers later: messages behind this one wait for it, in order. */
  #awaitBudget(item: Inbound & { type: 'message' }, wait: Promise<number>): void {
    this.#held = []
    this.#pause('budget')
    const settle = (ms: number): void => {
      if (ms > 0) this.#refuse(item.message, rateLimited(ms))
      else this.#deliver(item)
      const queue = this.#held ?? []
      this.#held = undefined
      while (queue.length > 0) {
        this.#accept(queue.shift()!)
        // Another message waits on the budget: the rest stays behind it.
        if (this.#held !== undefined) { (this.#held as Inbound[]).push(...queue); return }
      }
      this.#resume('budget')
    }
    // A shared limiter answers from a local bucket when its store fails; a rejection is a bug there.
    wait.then(settle, () => settle(0))
  }

  /** Hands a message to the connection (or keeps it until the connection subscribes). */
  #deliver(item: Inbound): void {
    if (item.type === 'message') this.#track(item.message)
    if (this.#subscriber === undefined) this.#early.push(item)
    else this.#subscriber.next(item)
  }

  /** Notes the requests a message from the client opens, and the ones its cancellations close. */
  #track(payload: unknown): void {
    const { ids, cancelled } = requestsOf(payload)
    for (const id of ids) this.#inFlight.add(id)
    for (const id of cancelled) this.#inFlight.delete(id)
  }

  /**
   * Answers each request of a refused payload with `error` and its id (a batch with a batch), and
   * drops its notifications and responses; the socket stays open.
   */
  #refuse(payload: unknown, error: JsonRpcErrorObject): void {
    const answers: JsonRpcErrorResponse[] = requestsOf(payload).ids.map(id => ({ jsonrpc: '2.0', id, error }))
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
    // A peer that never completes the closing handshake is cut off.
    const cutOff = after(CUT_OFF_MS, this.#givenScheduler, () => this.ws.terminate())
    this.ws.once('close', () => cutOff.unsubscribe())
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
    this.#pause('drain')
    return new Promise((resolve, reject) => this.ws.send(data, error => {
      if (this.ws.bufferedAmount < this.highWaterMark / 2) this.#resume('drain')
      if (error) reject(new TransportError('WebSocket write failed', { cause: error }))
      else resolve()
    }))
  }

  /** Stops reading the socket until every reason to pause is gone. */
  #pause(reason: PauseReason): void {
    if (this.#pausedFor.has(reason)) return
    this.#pausedFor.add(reason)
    if (this.#pausedFor.size === 1) (this.ws as unknown as { _socket?: { pause(): void } })._socket?.pause()
  }

  #resume(reason: PauseReason): void {
    if (!this.#pausedFor.delete(reason) || this.#pausedFor.size > 0) return
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
      const cutOff = after(CUT_OFF_MS, this.#givenScheduler, () => { this.ws.terminate(); resolve() })
      this.ws.once('close', () => cutOff.unsubscribe())
    })
  }
}

/** The error a request over its client's budget is answered with: -31029, `data.retryAfterMs`. */
function rateLimited(waitMs: number): JsonRpcErrorObject {
  return { code: ErrorCode.RateLimited, message: `Too many requests: try again in ${retryAfterSeconds(waitMs)} s`, data: { retryAfterMs: Math.ceil(waitMs) } }
}
