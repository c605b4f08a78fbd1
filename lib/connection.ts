import { Observable, Subject, asyncScheduler, type SchedulerLike, type Subscriber, type Subscription } from './rx.ts'
import { startHandler, type OutcomeObserver } from './outcome.ts'
import type { JsonObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, Meta, RequestId } from './jsonrpc/message.ts'
import {
  CancelledError, ConnectionClosedError, FrameTooLargeError, InternalError, InvalidRequestError, McpError,
  MethodNotFoundError, StructureLimitError, TransportError,
} from './jsonrpc/errors.ts'
import { checkMessage, isCheckFailure, isJsonObject, isRequestId } from './jsonrpc/guards.ts'
import { createIdGenerator, type IdGenerator } from './jsonrpc/ids.ts'
import type { Inbound, RequestInfo, ResponseStream, Transport } from './transport.ts'
import type { RequestEvent } from './operators/progress.ts'
import { withRequestTimeout } from './request-timeout.ts'
import type { Principal } from './auth.ts'
import { DEFAULT_REQUEST_TIMEOUT, DEFAULTS, type Connection, type ConnectionOptions, type RequestHandler, type RequestOptions, type InputAnswerer } from './connection-contract.ts'
import { IncomingRequest } from './incoming-request.ts'
import { BatchCollector, batchRefusal, countAnswered } from './batch-collector.ts'
import { abortReason, deliverProgress, failAll, type PendingRequest } from './pending-request.ts'
import { CallSite } from './call-site.ts'
import type { InspectionEvent } from './inspection-event.ts'
import { watchOutgoing, withMeta, type OutgoingWatch } from './request-watch.ts'
import type { RequestActorEvent } from './request-logic.ts'
import { RequestActors } from './request-actors.ts'
import { ConnectionWriter } from './connection-writer.ts'
import { answererOf, entryOfRelated } from './connection-answering.ts'

// The contract and the pieces live in files of their own; the names stay importable from here.
export { DEFAULT_REQUEST_TIMEOUT, DEFAULTS, IncomingRequest }
export type { Connection, ConnectionOptions, RequestGate, RequestHandler, RequestOptions, InputAnswerer } from './connection-contract.ts'
export type { InspectionEvent }

/**
 * Makes a {@link Connection} over a transport. Call `start()` after registering handlers.
 * @example
 * const connection = createConnection(transport)
 * connection.setRequestHandler('tools/list', () => ({ tools: [] }))
 * connection.start()
 */
export function createConnection(transport: Transport, options: ConnectionOptions = {}): Connection {
  return new JsonRpcConnection(transport, options)
}

/** The pipeline {@link Connection} draws: one per transport, its state in private fields (the writing half in ConnectionWriter). */
class JsonRpcConnection extends ConnectionWriter implements Connection {
  /**
   * What reads the transport's inbound for a connection: an observer whose callbacks are its
   * class's methods, one small object per connection instead of three closures.
   */
  static readonly #Reader = class InboundReader {
    constructor(readonly connection: JsonRpcConnection) {}
    next(item: Inbound): void { this.connection.#receive(item) }
    error(error: unknown): void { this.connection.#finish(error) }
    complete(): void { this.connection.#end() }
  }

  readonly #transport: Transport
  readonly #options: ConnectionOptions
  readonly #nextId: IdGenerator
  readonly #inspect: ((event: InspectionEvent) => void) | undefined
  /** Outgoing requests waiting for their response, by id (the id doubles as progress token). */
  readonly #pending = new Map<RequestId, PendingRequest>()
  /** The pending requests sent with `answerInput`, by id (made on the first such request). */
  #answering: Map<RequestId, InputAnswerer> | undefined = undefined
  /** The pending requests sent with `onLog`, by id (made on the first such request). */
  #logging: Map<RequestId, (params: JsonObject) => void> | undefined = undefined
  /** The request of this side the frame being handled was sent about, as its transport told (`Envelope.relatedRequestId`). */
  #related: RequestId | undefined = undefined
  /** Incoming requests whose handler runs, by id. */
  readonly #incoming = new Map<RequestId, IncomingRequest>()
  readonly #handlers = new Map<string, RequestHandler>()
  /** The notification bus: one Subject per method, made when first asked for (the map too: most connections never ask). */
  #bus: Map<string, Subject<JsonObject>> | undefined = undefined
  #inboundSubscription: Subscription | undefined
  /** The sender of the frame being handled (see #receive). */
  #principal: Principal | undefined = undefined
  /** The transport's request that carried the frame being handled (see #receive). */
  #requestInfo: RequestInfo | undefined = undefined
  /** The stream that carries the answers of the frame being handled (see #receive). */
  #stream: ResponseStream | undefined = undefined
  /** What a request's actor ending unanswered does (its parent stopped it). */
  readonly #stopped = (request: IncomingRequest) => this.#abort(request, new CancelledError('Request stopped'))
  /** What every request actor's events go to, with the request it was spawned for: one function for all. */
  readonly #onRequestEvent = (event: RequestActorEvent, request: IncomingRequest): void => this.#perform(request, event)
  /** Where each incoming request's actor is spawned (see ConnectionOptions.actors). */
  readonly #actors: RequestActors
  #isStarted = false
  #isClosed = false
  /** True once inbound completed while requests still run and the transport can answer them (see Transport.answersAfterEndMs). */
  #isEnding = false
  /** True once close() was called: an inbound completing then does not wait for answers. */
  #isClosing = false
  /** The deadline of an ending connection. */
  #grace: Subscription | undefined = undefined
  #resolveClosed!: () => void
  readonly closed: Promise<void>

  constructor(transport: Transport, options: ConnectionOptions) {
    super(transport, options)
    this.#transport = transport
    this.#options = options
    this.#nextId = options.idGenerator ?? createIdGenerator()
    this.#inspect = options.inspect
    this.#actors = new RequestActors(options.actors, options.scheduler)
    this.closed = new Promise(resolve => { this.#resolveClosed = resolve })
    this.#handlers.set('ping', () => EMPTY_RESULT)
  }

  get incoming(): ReadonlyMap<RequestId, IncomingRequest> { return this.#incoming }
  get transport(): Transport { return this.#transport }
  get isClosed(): boolean { return this.#isClosed }

  start(): void {
    if (this.#isStarted) return
    this.#isStarted = true
    this.#inboundSubscription = this.#transport.inbound.subscribe(new JsonRpcConnection.#Reader(this))
  }

  async close(): Promise<void> {
    if (!this.#isClosed) {
      this.#isClosing = true
      try { await this.#transport.close() } finally { this.#finish(undefined) }
    }
    return this.closed
  }

  setRequestHandler(method: string, handler: RequestHandler): void { this.#handlers.set(method, handler) }
  removeRequestHandler(method: string): void { this.#handlers.delete(method) }

  notifications<P extends JsonObject = JsonObject>(method: string): Observable<P> {
    const bus = this.#bus ??= new Map()
    let subject = bus.get(method)
    if (subject === undefined) {
      subject = new Subject<JsonObject>()
      if (this.#isClosed) subject.complete()
      bus.set(method, subject)
    }
    return subject.asObservable() as Observable<P>
  }

  notify(method: string, params?: JsonObject, relatedRequestId?: RequestId): void | Promise<void> {
    if (this.#isClosed) throw new ConnectionClosedError(`Cannot send ${method}: the connection is closed`)
    const options = this.#options
    const added = options.observer?.notification?.('out', method, params)
    if (added !== undefined) params = { ...params, _meta: withMeta(params?._meta as Meta | undefined, added) }
    const message: JsonRpcNotification = params === undefined ? { jsonrpc: '2.0', method }
      : { jsonrpc: '2.0', method, params: options.shapeOutgoing === undefined ? params : options.shapeOutgoing('notification', method, params, relatedRequestId === undefined ? undefined : this.#incoming.get(relatedRequestId)) }
    return this.send(message, relatedRequestId)
  }

  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>> {
    const observer = this.#options.observer
    if (observer === undefined) return this.#request(method, params, options)
    return new Observable<RequestEvent<R>>(subscriber => {
      const watch = observer.outgoing(method, params)
      if (watch === undefined) return this.#request<R>(method, params, options).subscribe(subscriber)
      return watchOutgoing(this.#request<R>(method, params, watch.meta === undefined ? options : { ...options, meta: withMeta(options?.meta, watch.meta) }, watch), watch, subscriber)
    })
  }

  #request<R extends JsonObject>(method: string, params: JsonObject | undefined, options: RequestOptions | undefined, watch?: OutgoingWatch): Observable<RequestEvent<R>> {
    // With `captureStack`, a timeout or a closed connection points at the caller, not at a timer.
    // Off by default: capturing costs about 4 µs per request, a fifth of a whole echo round trip.
    const callSite = new CallSite(method)
    if (options?.captureStack ?? this.#options.captureStack ?? false) callSite.capture(JsonRpcConnection.prototype.request)
    const source = new Observable<RequestEvent<R>>(subscriber => this.#sendRequest(method, params, options, subscriber as Subscriber<RequestEvent<JsonObject>>, callSite, watch))
    return withRequestTimeout(source, options, this.#options, callSite)
  }

  #sendRequest(method: string, params: JsonObject | undefined, options: RequestOptions | undefined, subscriber: Subscriber<RequestEvent<JsonObject>>, callSite: CallSite, watch: OutgoingWatch | undefined): (() => void) | undefined {
    if (this.#isClosed || this.#isEnding) { subscriber.error(callSite.closed()); return }
    const refusal = this.#options.gateOutgoing?.(method, params)
    if (refusal !== undefined) { subscriber.error(refusal); return }
    const signal = options?.signal
    if (signal?.aborted) { subscriber.error(new CancelledError('Request aborted before it was sent', { cause: signal.reason })); return }
    const id = this.#nextId()
    watch?.sent?.(id)
    const wantsProgress = options?.progress !== false
    const meta = options?.meta
    const withMeta = wantsProgress || meta !== undefined
      ? { ...params, _meta: { ...(params?._meta as Meta | undefined), ...meta, ...(wantsProgress ? { progressToken: id } : undefined) } }
      : params
    const own = this.#options
    const outParams = own.shapeOutgoing === undefined || withMeta === undefined ? withMeta : own.shapeOutgoing('request', method, withMeta)
    const message: JsonRpcRequest = outParams === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: outParams }
    this.#pending.set(id, { subscriber, method })
    const answerInput = options?.answerInput
    if (answerInput !== undefined) (this.#answering ??= new Map()).set(id, answerInput)
    const onLog = options?.onLog
    if (onLog !== undefined) (this.#logging ??= new Map()).set(id, onLog)
    let onAbort: (() => void) | undefined
    if (signal !== undefined) {
      onAbort = () => {
        if (!this.#pending.delete(id)) return
        this.#sendCancel(id, method, abortReason(signal.reason))
        subscriber.error(new CancelledError('Request aborted', { cause: signal.reason }))
      }
      signal.addEventListener('abort', onAbort, { once: true })
    }
    try {
      const written = this.send(message, options?.relatedRequestId, options?.headers)
      if (written !== undefined) written.catch(error => this.#failPending(id, error))
    } catch (error) {
      this.#failPending(id, error)
    }
    return () => {
      if (answerInput !== undefined) this.#answering!.delete(id)
      if (onLog !== undefined) this.#logging!.delete(id)
      if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort)
      // Still pending here means the caller left before the answer: cancel on the wire.
      if (this.#pending.delete(id)) this.#sendCancel(id, method, 'Request cancelled by the caller')
    }
  }

  #sendCancel(id: RequestId, method: string, reason: string): void {
    // MCP lifecycle: the initialize request MUST NOT be cancelled.
    if (method === 'initialize' || this.#isClosed) return
    try {
      const written = this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } })
      written?.catch(error => this.report(error))
    } catch (error) { this.report(error) }
  }

  #failPending(id: RequestId, error: unknown): void {
    const pending = this.#pending.get(id)
    if (pending === undefined) return
    this.#pending.delete(id)
    pending.subscriber.error(error instanceof TransportError || error instanceof ConnectionClosedError ? error : new TransportError(`Could not send ${pending.method}`, { cause: error }))
  }

  // ---- incoming ----

  #receive(item: Inbound): void {
    if (item.type === 'session') { this.#options.sharedSession?.(item.session); return }
    if (item.type === 'invalid') {
      const error = item.error
      if ((error instanceof FrameTooLargeError || error instanceof StructureLimitError) && error.id !== undefined) return this.#receiveTooLarge(error, error.id)
      // Not JSON or not UTF-8 arrives as ParseError (-32700); an oversized frame is an invalid request.
      this.sendError(null, error instanceof McpError ? error : new InvalidRequestError(`Invalid Request: ${error.message}`))
      return
    }
    const value = item.message
    this.#inspect?.({ type: 'rxmcp.frame.in', message: value })
    // Frames are handled synchronously: each request of this one takes its sender from here.
    this.#principal = item.principal
    this.#requestInfo = item.requestInfo
    this.#stream = item.stream
    this.#related = item.relatedRequestId
    if (item.session !== undefined) this.#options.sharedSession?.(item.session)
    if (Array.isArray(value)) this.#receiveBatch(value)
    else this.#receiveOne(value, undefined)
    // Kept no longer than the frame: an idle connection holds no request's headers nor its stream.
    this.#principal = undefined
    this.#requestInfo = undefined
    this.#stream = undefined
    this.#related = undefined
  }

  /**
   * An oversized frame, or one past the structure limits, whose id the codec read. A response
   * refused so fails the request waiting for it at once (its caller would otherwise wait for the
   * timeout); a refused request is answered with an error carrying its id (-32600 for its size,
   * -32700 for its structure), so the peer's caller fails at once too.
   */
  #receiveTooLarge(error: FrameTooLargeError | StructureLimitError, id: RequestId): void {
    if (error.kind === 'response') {
      const pending = this.#pending.get(id)
      if (pending === undefined) return this.#inspect?.({ type: 'rxmcp.response.unknown', id })
      this.#pending.delete(id)
      return pending.subscriber.error(error)
    }
    if (error instanceof StructureLimitError) return this.answerError(id, error, undefined)
    this.answerError(id, new InvalidRequestError(`Invalid Request: ${error.message}`, { size: error.size, limit: error.limit }), undefined)
  }

  #receiveBatch(values: unknown[]): void {
    const refusal = batchRefusal(values, this.#options.allowBatch?.() ?? false, this.#options.maxBatchSize ?? DEFAULTS.maxBatchSize)
    if (refusal !== undefined) return this.sendError(null, refusal)
    // Requests in the batch (including malformed ones, which are answered too) decide when it flushes.
    const answered = countAnswered(values)
    const batch = answered > 0 ? new BatchCollector(answered, responses => this.sendBatch(responses)) : undefined
    for (const value of values) this.#receiveOne(value, batch)
  }

  #receiveOne(value: unknown, batch: BatchCollector | undefined): void {
    const checked = checkMessage(value)
    if (isCheckFailure(checked)) return this.answerError(checked.id, checked.error, batch)
    const message = checked as JsonRpcMessage
    if ('method' in message) {
      if ('id' in message) return this.#receiveRequest(message, batch)
      return this.#receiveNotification(message)
    }
    this.#receiveResponse(message)
  }

  #receiveResponse(response: JsonRpcResponse): void {
    const id = response.id
    const pending = id === null ? undefined : this.#pending.get(id)
    if (pending === undefined) {
      // JSON-RPC: a response nobody waits for is dropped; the peer gets no answer to an answer.
      this.#inspect?.({ type: 'rxmcp.response.unknown', id })
      if ('error' in response) this.report(McpError.from(response.error))
      return
    }
    this.#pending.delete(id!)
    if ('error' in response) return pending.subscriber.error(McpError.from(response.error))
    // What the transport told of the frame goes with the result (the client learns from it which
    // transport answered); a frame it told nothing of adds nothing to the event.
    const requestInfo = this.#requestInfo
    pending.subscriber.next(requestInfo === undefined ? { type: 'result', result: response.result } : { type: 'result', result: response.result, requestInfo })
    pending.subscriber.complete()
  }

  #receiveNotification(notification: JsonRpcNotification): void {
    const params = notification.params
    this.#options.observer?.notification?.('in', notification.method, params)
    switch (notification.method) {
      case 'notifications/cancelled': {
        const requestId = params?.requestId
        const request = isRequestId(requestId) ? this.#incoming.get(requestId) : undefined
        // Unknown or finished ids are ignored; the request's actor decides the rest (initialize is not cancelled).
        request?.actor!.send({ type: 'cancel', reason: typeof params?.reason === 'string' ? new CancelledError(params.reason) : undefined })
        break
      }
      case 'notifications/progress': deliverProgress(this.#pending, params); break
      case 'notifications/message': {
        // A log message about one of this side's requests that wants them: that request's, not the bus's.
        const logging = this.#logging
        const take = logging !== undefined && logging.size > 0 ? entryOfRelated(logging, this.#related) : undefined
        if (take === undefined) break
        this.#options.onNotification?.(notification)
        take(params ?? EMPTY_PARAMS)
        return
      }
    }
    this.#options.onNotification?.(notification)
    this.#bus?.get(notification.method)?.next(params ?? EMPTY_PARAMS)
  }

  #receiveRequest(message: JsonRpcRequest, batch: BatchCollector | undefined): void {
    const id = message.id
    // A side that writes no responses runs nothing it could not answer: the request is dropped.
    if (!this.canRespond(id, undefined, batch)) return
    if (this.#incoming.has(id)) {
      // MCP basic: ids MUST NOT be reused in a session; the first request keeps running.
      return this.answerError(id, new InvalidRequestError(`Invalid Request: request id ${JSON.stringify(id)} is already in use`), batch)
    }
    const request = new IncomingRequest(id, message.method, message.params)
    request.batch = batch
    request.principal = this.#principal
    request.requestInfo = this.#requestInfo
    request.stream = this.#stream
    const observer = this.#options.observer
    // The gate has read the request's era and `_meta` once it ran: the watch is asked after it.
    const refusal = this.#options.gateRequest?.(request)
    if (observer !== undefined) request.watch = observer.incoming(request)
    if (refusal !== undefined) return this.#refuse(request, refusal)
    const handler = (this.#answering !== undefined && this.#answering.size > 0 ? answererOf(this.#answering, this.#related, message.method) : undefined)
      ?? this.#handlers.get(message.method) ?? this.#options.findHandler?.(message.method)
    if (handler === undefined) return this.#refuse(request, new MethodNotFoundError(`Method not found: ${message.method}`))
    request.onStopped = this.#stopped // bind below, not an arrow: tsx names every arrow it makes
    request.actor = this.#actors.spawn(request, this.#onRequestEvent)
    this.#incoming.set(id, request)
    startHandler(handler, message.params, request, request, SETTLED)
  }

  /** Answers a request refused before its handler ran (the gate, an unknown method). */
  #refuse(request: IncomingRequest, error: McpError): void {
    request.watch?.event({ type: 'error', error })
    this.answerError(request.id, error, request.batch)
  }

  /** Does what a request's actor decided; the last answer of an ending connection closes it. */
  #perform(request: IncomingRequest, event: RequestActorEvent): void {
    this.#act(request, event)
    if (this.#isEnding && this.#incoming.size === 0) this.#closeWhenAnswered()
  }

  #act(request: IncomingRequest, event: RequestActorEvent): void {
    switch (event.type) {
      case 'result': return this.#succeed(request, event.result)
      case 'error': return this.#fail(request, event.error)
      case 'progress': {
        if (this.#isClosed) return
        request.hasSentProgress = true
        request.watch?.event(event)
        // A write that fails is the transport going: its close reaches the connection next.
        try { this.notify('notifications/progress', event.params, request.id)?.catch(() => {}) } catch { return }
        return
      }
      case 'cancel': return this.#abort(request, event.reason)
      case 'closed': return this.#abort(request, event.error)
    }
  }

  /** Stops a request's handler without an answer (cancelled, or the connection closed). */
  #abort(request: IncomingRequest, reason: unknown): void {
    if (request.isDone) return
    if (this.#incoming.get(request.id) === request) this.#incoming.delete(request.id)
    request.watch?.event({ type: 'cancel', reason })
    request.cancel(reason)
    // No response for a cancelled request, not even inside a batch: it gives up its slot.
    request.batch?.skip()
  }

  #succeed(request: IncomingRequest, result: unknown): void {
    if (request.isDone) return
    request.isDone = true
    this.#incoming.delete(request.id)
    request.watch?.event({ type: 'result', result })
    const options = this.#options
    const body = !isJsonObject(result) ? EMPTY_RESULT : options.shapeOutgoing === undefined ? result : options.shapeOutgoing('result', request.method, result, request)
    this.#respond(request, { jsonrpc: '2.0', id: request.id, result: body })
  }

  #respond(request: IncomingRequest, response: JsonRpcResponse): void {
    if (request.batch !== undefined) return request.batch.add(response)
    if (this.#isClosed) return
    if (!request.hasSentProgress) return this.sendResponse(response, request.id)
    // A request that reported progress is answered one macrotask later, so the answer does not share
    // a read with its last progress notification: the official SDK client dispatches progress a
    // microtask late and drops it once the response for its token has been handled.
    this.#clock().schedule(() => { if (!this.#isClosed) this.sendResponse(response, request.id) })
  }

  #fail(request: IncomingRequest, error: unknown): void {
    if (request.isDone) return
    request.isDone = true
    this.#incoming.delete(request.id)
    let wire: McpError
    if (error instanceof McpError) wire = error
    else {
      this.#inspect?.({ type: 'rxmcp.handler.error', method: request.method, error })
      wire = this.#options.toWireError?.(error, request) ?? new InternalError('Internal error')
    }
    request.watch?.event({ type: 'error', error: wire })
    this.#respond(request, { jsonrpc: '2.0', id: request.id, error: wire.toJSON() })
  }

  /**
   * Inbound completed. A transport that can still send (Transport.answersAfterEndMs) gets the
   * answers of the requests in flight, for at most that long; what this side asked the peer fails
   * now, as its answer can no longer be read.
   */
  #end(): void {
    const graceMs = this.#transport.answersAfterEndMs
    if (this.#isClosing || !(graceMs !== undefined && graceMs > 0) || this.#incoming.size === 0) return this.#finish(undefined)
    this.#isEnding = true
    this.#inspect?.({ type: 'rxmcp.ending', inFlight: this.#incoming.size })
    if (this.#pending.size > 0) failAll(this.#pending, new Map(), new ConnectionClosedError('Connection closed: the peer\'s input ended'))
    // Held so that closing sooner lets a process with nothing else to do exit at once.
    this.#grace = this.#clock().schedule(() => this.#finish(undefined), graceMs)
  }

  /**
   * Closes an ending connection once its last answer is out: one macrotask later, after an answer
   * held back for its progress (see #respond).
   */
  #closeWhenAnswered(): void {
    this.#clock().schedule(() => this.#finish(undefined))
  }

  #clock(): SchedulerLike {
    return this.#options.scheduler ?? asyncScheduler
  }

  #finish(error: unknown): void {
    if (this.#isClosed) return
    this.#isClosed = true
    this.#inboundSubscription?.unsubscribe()
    this.#grace?.unsubscribe()
    this.#options.observer?.closed?.(error)
    this.#inspect?.({ type: 'rxmcp.closed', error })
    // Every pending request fails at once: nobody will answer it now. The error is made only when
    // someone gets it: a one-exchange connection (a modern HTTP request) closes with nothing left.
    if (this.#pending.size > 0 || this.#incoming.size > 0) failAll(this.#pending, this.#incoming, error)
    if (this.#bus !== undefined) for (const subject of this.#bus.values()) subject.complete()
    this.#resolveClosed()
  }
}

/** Every request's outcome goes to its actor: one object for all connections, not closures per session. */
const SETTLED: OutcomeObserver<unknown, IncomingRequest> = {
  value: (request, result) => request.actor!.send({ type: 'result', result }),
  error: (request, error) => request.actor!.send({ type: 'error', error }),
}
const EMPTY_RESULT: JsonObject = Object.freeze({}) as JsonObject
const EMPTY_PARAMS: JsonObject = Object.freeze({}) as JsonObject
