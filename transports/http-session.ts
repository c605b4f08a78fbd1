import type { Principal } from '../lib/auth.ts'
import type { Observable } from '../lib/rx.ts'
import type { Inbound, RequestInfo, SendOptions, SharedSession, Transport } from '../lib/transport.ts'
import type { JsonRpcMessage, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { encodeSseComment, encodeSseEvent } from '../lib/codec/sse.ts'
import type { EventStore } from './event-store.ts'
import { SSE_HEADERS, type Exchange, type ListenerSession, type Sink } from './http-exchange.ts'
import { isFrameError, isResponsePayload, responseIdOf, responseIds } from './http-ids.ts'
import { InboundQueue } from './inbound-queue.ts'
import type { SessionCluster } from './http-cluster.ts'

export { MAX_EARLY_MESSAGES } from './inbound-queue.ts'

/** What every session of one listener shares (one object, so a session holds one pointer to it). */
export interface SessionConfig {
  readonly eventStore: EventStore | undefined
  readonly retryMs: number
  readonly highWaterMark: number
  readonly maxStreams: number
  /** A stream id unique in this listener and not derived from any session id. */
  nextStreamId(): string
  /** Set when sessions are shared between instances (the Redis scale-out). */
  readonly cluster?: SessionCluster
}

// ---- one Streamable HTTP session ----

/** One SSE stream of a session: a POST's answer stream, or a standalone GET stream. */
class HttpStream {
  /** Requests whose responses still have to go out on this stream (POST streams). */
  readonly pending: Set<RequestId> | undefined
  /** Where events are written; undefined while the client is away (they are stored for resumption). */
  sink: Sink | undefined
  /** Events written before the HTTP answer started (while the POST's body is being handled). */
  buffer: string[] | undefined = []

  constructor(readonly id: string, pending: RequestId[] | undefined) {
    this.pending = pending === undefined ? undefined : new Set(pending)
  }

  get isStandalone(): boolean { return this.pending === undefined }

  write(text: string): void {
    if (this.sink !== undefined) this.sink.write(text)
    else this.buffer?.push(text)
  }

  end(): void {
    const sink = this.sink
    this.sink = undefined
    this.buffer = undefined
    sink?.end()
  }
}

/** The answers of one JSON-response POST, collected until each of its requests is answered or cancelled. */
class JsonAnswer {
  readonly answers: JsonRpcMessage[] = []
  readonly pending: Set<RequestId>
  constructor(ids: RequestId[], readonly isBatch: boolean, readonly done: (payload: JsonRpcPayload | undefined) => void) {
    this.pending = new Set(ids)
  }
  add(payload: JsonRpcPayload): void {
    for (const message of Array.isArray(payload) ? payload : [payload]) this.answers.push(message)
    for (const id of responseIds(payload)) this.pending.delete(id)
    this.#check()
  }
  drop(id: RequestId): void {
    this.pending.delete(id)
    this.#check()
  }
  #check(): void {
    if (this.pending.size > 0) return
    const answers = this.answers
    this.done(answers.length === 0 ? undefined : this.isBatch ? answers : answers[0]!)
  }
}

type Route = HttpStream | JsonAnswer

/**
 * One Streamable HTTP session: the Transport the server serves, its SSE streams (one per POST that
 * carries requests, and standalone GET streams), and where each request in flight is answered.
 */
export class HttpSession implements Transport, ListenerSession {
  /** The client's IP address (for the bridge's per-client limit). */
  remoteAddress: string | undefined
  /** What the connection reads (created with the session; nothing else is held for an idle one). */
  readonly #inbound = new InboundQueue()
  /** Streams by id: open ones, and those kept for resumption (created on the first). */
  #streams: Map<string, HttpStream> | undefined
  /** Where each request in flight is answered (created on the first). */
  #routes: Map<RequestId, Route> | undefined
  /** Set while a POST body is handed to the connection: errors about the whole body collect here. */
  #frameErrors: JsonRpcPayload[] | undefined
  /** The principal that created the session (`principalKey`): only its requests may use it. */
  principalKey = ''
  /** The id of the initialize request, to read the negotiated version off its answer. */
  initializeRequestId: RequestId | undefined
  /** The negotiated protocol version, once initialize is answered (see #learnVersion). */
  protocolVersion: string | undefined
  /** Set when the session is shared between instances: the server saves its state here. */
  shared: SharedSession | undefined
  /** When its cluster record was last refreshed (listener clock). */
  sharedAt = 0
  /** The server's state as last saved (JSON), to write the record again after an outage. */
  sharedState: string | undefined
  #isEnded = false

  constructor(readonly id: string, readonly config: SessionConfig, public lastSeen: number, readonly onEnd: (session: HttpSession) => void) {}

  /** The session's `Mcp-Session-Id` (see Transport.sessionId). */
  get sessionId(): string { return this.id }

  get kind(): string { return 'streamable-http' }
  get inbound(): Observable<Inbound> {
    return this.#inbound.observe()
  }


  /**
   * Hands a POST's body to the connection, with its sender and the POST itself (`requestInfo`:
   * its headers and the client's address, seen by each request of the body). Returns the error the
   * connection answered about the body as a whole (id null: a batch where none is allowed), which
   * belongs on this POST.
   */
  receive(payload: unknown, principal?: Principal, requestInfo?: RequestInfo, stream?: HttpStream): JsonRpcPayload | undefined {
    const errors: JsonRpcPayload[] = []
    this.#frameErrors = errors
    try {
      // A POST's SSE stream can be ended while its requests go on, when its events are stored.
      const closable = stream === undefined || this.config.eventStore === undefined ? undefined : { close: () => this.#endStream(stream) }
      const item: Inbound = { type: 'message', message: payload, principal, requestInfo, stream: closable, session: this.shared }
      // Not read yet (a transport server whose connections are subscribed late): kept, bounded.
      this.#inbound.push(item)
    } finally {
      this.#frameErrors = undefined
    }
    return errors[0]
  }

  isInFlight(id: RequestId): boolean {
    return this.#routes?.has(id) ?? false
  }

  hasRequestInFlight(): boolean {
    return this.#routes !== undefined && this.#routes.size > 0
  }

  /**
   * Takes the session's negotiated version from a message the server sends (`SendOptions`: the
   * initialize answer is the first to carry it), before that message goes out: later POSTs are
   * checked against it. A shared session's record keeps it for the other instances.
   */
  #learnVersion(version: string): void {
    this.protocolVersion = version
    if (this.shared !== undefined) quietly(this.config.cluster?.save(this.id, { protocolVersion: version }))
  }

  keepAlive(): void {
    if (this.#streams === undefined) return
    for (const stream of this.#streams.values()) if (stream.sink !== undefined) stream.write(KEEP_ALIVE)
  }

  #route(ids: RequestId[], route: Route): void {
    this.#routes ??= new Map()
    for (const id of ids) this.#routes.set(id, route)
  }

  /** Collects the answers to `ids` for one JSON body; undefined when every request was cancelled. */
  expectJson(ids: RequestId[], isBatch: boolean): Promise<JsonRpcPayload | undefined> {
    return new Promise(resolve => this.#route(ids, new JsonAnswer(ids, isBatch, resolve)))
  }

  /** Forgets the routes of requests the connection will not answer one by one. */
  forget(ids: RequestId[]): void {
    for (const id of ids) this.#routes?.delete(id)
    this.#compact()
  }

  /**
   * Requests the client cancelled (notifications/cancelled) get no answer: their POST must not
   * wait for one. A JSON POST answers without them; a stream ends once nothing else is pending.
   */
  abandon(ids: RequestId[]): void {
    for (const id of ids) {
      // MCP lifecycle: initialize cannot be cancelled, so its answer still comes.
      if (id === this.initializeRequestId) continue
      const route = this.#routes?.get(id)
      if (route === undefined) continue
      this.#routes!.delete(id)
      if (route instanceof JsonAnswer) { route.drop(id); continue }
      route.pending!.delete(id)
      if (route.pending!.size === 0 && route.sink !== undefined) this.#finish(route)
    }
    this.#compact()
  }

  /** A new stream, registered; undefined when the session holds `maxStreams` and none can go. */
  #newStream(pending: RequestId[] | undefined, protocolVersion: string | undefined): HttpStream | undefined {
    this.#streams ??= new Map()
    if (this.#streams.size >= this.config.maxStreams) {
      // The oldest stream the client is away from makes room (its events go with it).
      let oldest: HttpStream | undefined
      for (const stream of this.#streams.values()) if (stream.sink === undefined) { oldest = stream; break }
      if (oldest === undefined) return undefined
      this.drop(oldest)
    }
    const stream = new HttpStream(this.config.nextStreamId(), pending)
    ;(this.#streams ??= new Map()).set(stream.id, stream)
    if (pending !== undefined) this.#route(pending, stream)
    // SEP-1699: a priming event with an id (and the retry delay) lets the client resume at once.
    // Only clients of 2025-11-25 or later expect its empty data.
    const version = this.protocolVersion ?? protocolVersion
    const store = this.config.eventStore
    if (store !== undefined && (version === undefined || version >= '2025-11-25')) {
      const prime = (eventId: string) => stream.write(`id: ${eventId}\nretry: ${this.config.retryMs}\ndata: \n\n`)
      // A shared session's POST stream keeps its requests' ids, so another instance taking the
      // session over can answer the ones this instance never will.
      const context = this.shared === undefined || pending === undefined ? { sessionId: this.id, data: '[]' } : { sessionId: this.id, data: '[]', pending }
      const stored = store.storeEvent(stream.id, PRIMING, context)
      if (typeof stored === 'string') prime(stored)
      else void stored.then(prime, () => {})
    }
    return stream
  }

  /** The answer stream of a POST; it starts (`attach`) once the body went to the connection. */
  openPostStream(requestIds: RequestId[], protocolVersion: string | undefined): HttpStream | undefined {
    return this.#newStream(requestIds, protocolVersion)
  }

  /** A standalone GET stream for messages unrelated to a request; false when the session has too many. */
  openStandalone(exchange: Exchange, protocolVersion: string | undefined): boolean {
    const stream = this.#newStream(undefined, protocolVersion)
    if (stream === undefined) return false
    // Named in the session's record: an instance taking the session over keeps it for the client.
    if (this.shared !== undefined) quietly(this.config.cluster?.save(this.id, { standalone: stream.id }))
    this.attach(stream, exchange)
    return true
  }

  /** Starts the SSE answer of `stream` on `exchange` with what was written so far. */
  attach(stream: HttpStream, exchange: Exchange): void {
    const sink = exchange.stream(200, { ...SSE_HEADERS, 'mcp-session-id': this.id }, this.config.highWaterMark)
    const early = stream.buffer
    stream.buffer = undefined
    stream.sink = sink
    exchange.onClose(() => { if (stream.sink === sink) this.#detach(stream) })
    if (early !== undefined) for (const text of early) sink.write(text)
    // Answered while the body was being handled: the stream is already done.
    if (stream.pending !== undefined && stream.pending.size === 0 && stream.sink === sink) this.#finish(stream)
  }

  /** Forgets a stream entirely: its routes, and its events in the store. */
  drop(stream: HttpStream): void {
    if (stream.pending !== undefined) for (const id of stream.pending) if (this.#routes?.get(id) === stream) this.#routes.delete(id)
    stream.end()
    this.#streams?.delete(stream.id)
    this.#compact()
    quietly(this.config.eventStore?.deleteStream?.(stream.id, this.id))
  }

  /** An idle session keeps no empty tables: a Map keeps its grown capacity after it empties. */
  #compact(): void {
    if (this.#streams?.size === 0) this.#streams = undefined
    if (this.#routes?.size === 0) this.#routes = undefined
  }

  async resume(exchange: Exchange, lastEventId: string): Promise<boolean> {
    const store = this.config.eventStore
    if (store === undefined || (this.#streams === undefined && this.shared === undefined)) return false
    const replay: string[] = []
    const answered: RequestId[] = []
    const streamId = await store.replayEventsAfter(lastEventId, (eventId, message) => {
      if (message === PRIMING || (Array.isArray(message) && message.length === 0)) return
      if (this.shared !== undefined) answered.push(...responseIds(message))
      replay.push(encodeSseEvent({ event: 'message', id: eventId, data: JSON.stringify(message) }))
    })
    // The stream must be one of this session's: an event id of another session replays nothing here.
    let stream = streamId === undefined ? undefined : this.#streams?.get(streamId)
    // A shared session taken over from an instance that is gone: its streams continue here.
    let lost: RequestId[] = []
    if (stream === undefined && streamId !== undefined && this.shared !== undefined && !this.#isEnded) {
      const adopted = await this.#adopt(streamId, answered)
      if (adopted !== undefined) ({ stream, lost } = adopted)
    }
    if (stream === undefined || this.#isEnded) return false
    const sink = exchange.stream(200, { ...SSE_HEADERS, 'mcp-session-id': this.id }, this.config.highWaterMark)
    for (const text of replay) sink.write(text)
    if (!this.#streams!.has(stream.id)) { sink.end(); return true }
    // The client is back on a new connection: an old one still open is dead to it.
    const old = stream.sink
    stream.sink = sink
    old?.end()
    exchange.onClose(() => { if (stream.sink === sink) this.#detach(stream) })
    if (stream.pending !== undefined && stream.pending.size === 0) this.#finish(stream)
    // Requests the instance that was serving them took with it: answered, so none waits forever.
    for (const id of lost) this.send({ jsonrpc: '2.0', id, error: { code: -32603, message: 'Internal error: the server instance serving this request stopped before answering; send it again' } })
    return true
  }

  /**
   * Takes on a stream of this session that another instance served: the store must say it is this
   * session's. A POST stream's requests not answered in the store are returned as lost.
   */
  async #adopt(streamId: string, answered: RequestId[]): Promise<{ stream: HttpStream; lost: RequestId[] } | undefined> {
    const store = this.config.eventStore!
    if (store.hasStream === undefined || !(await store.hasStream(this.id, streamId))) return undefined
    const pending = await store.pendingOf?.(streamId, this.id)
    const lost = pending === undefined ? [] : pending.filter(id => !answered.includes(id))
    const stream = new HttpStream(streamId, pending === undefined ? undefined : lost)
    stream.buffer = undefined
    ;(this.#streams ??= new Map()).set(streamId, stream)
    if (lost.length > 0) this.#route(lost, stream)
    return { stream, lost }
  }

  #detach(stream: HttpStream): void {
    stream.sink = undefined
    // Without an event store, nothing can resume it.
    if (this.config.eventStore === undefined) this.drop(stream)
  }

  #finish(stream: HttpStream): void {
    // Called only with the client attached: it has every event, so none needs keeping for replay.
    this.drop(stream)
  }

  /** The id a response answers; for a batch of responses, the first one with a route. */
  #routedResponseId(payload: JsonRpcPayload): RequestId | undefined {
    if (!Array.isArray(payload)) return responseIdOf(payload)
    const ids = responseIds(payload)
    return ids.find(id => this.isInFlight(id)) ?? ids[0]
  }

  /**
   * Where a message unrelated to a request goes: the newest standalone stream with a client on it,
   * else (with an event store) the newest one the client is away from, to be replayed when it resumes.
   */
  #standalone(): HttpStream | undefined {
    let attached: HttpStream | undefined
    let detached: HttpStream | undefined
    if (this.#streams !== undefined) {
      for (const stream of this.#streams.values()) {
        if (!stream.isStandalone) continue
        if (stream.sink !== undefined) attached = stream
        else detached = stream
      }
    }
    return attached ?? (this.config.eventStore === undefined ? undefined : detached)
  }

  /** The newest standalone stream's id (what a shared session's record names). */
  get standaloneId(): string | undefined {
    let id: string | undefined
    if (this.#streams !== undefined) for (const stream of this.#streams.values()) if (stream.isStandalone) id = stream.id
    return id
  }

  /**
   * A shared session taken over: the server hears of its record at once (Inbound `session`), not
   * with the client's next message, so an update it subscribed to is not missed meanwhile.
   */
  announceShared(): void {
    if (this.shared !== undefined) this.#inbound.push({ type: 'session', session: this.shared })
  }

  /** A shared session taken over: its standalone stream (named in its record) keeps what is sent until the client resumes it. */
  keepStandalone(streamId: string): void {
    const stream = new HttpStream(streamId, undefined)
    stream.buffer = undefined
    ;(this.#streams ??= new Map()).set(streamId, stream)
  }

  send(payload: JsonRpcPayload, options?: SendOptions): void {
    if (this.#isEnded) throw new TransportError('The HTTP session has ended')
    const version = options?.protocolVersion
    if (version !== undefined && version !== this.protocolVersion) this.#learnVersion(version)
    const responseId = this.#routedResponseId(payload)
    // An error answering nothing this session routes, sent while a body is handed over: it is about
    // that body as a whole (id null, or an id the transport did not read as a request's).
    if (this.#frameErrors !== undefined && options?.relatedRequestId === undefined && isFrameError(payload) && (responseId === undefined || !this.isInFlight(responseId))) {
      this.#frameErrors.push(payload)
      return
    }
    const key = responseId ?? options?.relatedRequestId
    const route = key === undefined ? undefined : this.#routes?.get(key)
    if (route instanceof JsonAnswer && responseId !== undefined) {
      for (const id of responseIds(payload)) this.#routes!.delete(id)
      this.#compact()
      return route.add(payload)
    }
    // MCP Streamable HTTP: a response goes on the stream of the POST that carried its request (or
    // that stream resumed), never on a standalone GET stream; one whose stream is gone (the client
    // left it and nothing can replay it, or it made room for a newer one) is dropped.
    const stream = route instanceof HttpStream ? route : isResponsePayload(payload) ? undefined : this.#standalone()
    if (stream === undefined) return
    const data = JSON.stringify(payload)
    const deliver = (eventId: string | undefined) => {
      stream.write(eventId === undefined ? `event: message\ndata: ${data}\n\n` : `event: message\nid: ${eventId}\ndata: ${data}\n\n`)
      if (responseId !== undefined && stream.pending !== undefined) {
        for (const id of responseIds(payload)) { stream.pending.delete(id); if (this.#routes?.get(id) === stream) this.#routes.delete(id) }
        // Every request of the POST is answered: its stream is done.
        if (stream.pending.size === 0 && stream.sink !== undefined) this.#finish(stream)
        else this.#compact()
      }
    }
    const store = this.config.eventStore
    if (store === undefined) return deliver(undefined)
    const stored = store.storeEvent(stream.id, payload, { sessionId: this.id, data })
    if (typeof stored === 'string') deliver(stored)
    else void stored.then(deliver, () => deliver(undefined))
  }

  /** Ends a POST stream whose events are stored, kept: later events are replayed when the client comes back. */
  #endStream(stream: HttpStream): void {
    if (stream.sink === undefined || !this.#streams?.has(stream.id)) return
    stream.end()
  }

  async close(): Promise<void> {
    this.end()
  }

  /**
   * Ends the session here. With `handOver` (a shared session whose instance is shutting down), its
   * record and events stay for the instance that takes it over; otherwise they go with it.
   */
  end(handOver = false): void {
    if (this.#isEnded) return
    this.#isEnded = true
    // Read by the server when the connection closes: a session that goes on elsewhere keeps its tasks.
    if (handOver && this.shared !== undefined) this.shared.isHandedOver = true
    const store = handOver && this.shared !== undefined ? undefined : this.config.eventStore
    if (this.#streams !== undefined) {
      for (const stream of this.#streams.values()) {
        stream.end()
        if (store?.deleteSession === undefined) quietly(store?.deleteStream?.(stream.id, this.id))
      }
      this.#streams.clear()
    }
    // Everything the session stored goes with it (DELETE, idle expiry, eviction, close).
    quietly(store?.deleteSession?.(this.id))
    if (this.shared !== undefined && !handOver) quietly(this.config.cluster?.release(this.id))
    this.#routes?.clear()
    this.#inbound.end()
    this.onEnd(this)
  }
}

/** What the store keeps for a priming event: no message, only a position in the stream. */
const PRIMING = [] as unknown as JsonRpcPayload
const KEEP_ALIVE = encodeSseComment('keep-alive')

/** Lets a store's asynchronous clean-up fail without an unhandled rejection: it only frees memory. */
function quietly(result: void | Promise<void> | undefined): void {
  if (result !== undefined) result.catch(() => {})
}
