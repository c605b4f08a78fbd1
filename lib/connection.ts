import { Observable, Subject, asyncScheduler, isObservable, type SchedulerLike, type Subscriber, type Subscription } from './rx.ts'
import type {
  JsonObject, JsonRpcMessage, JsonRpcNotification, JsonRpcPayload, JsonRpcRequest, JsonRpcResponse, Meta, RequestId,
} from './jsonrpc/message.ts'
import {
  CancelledError, ConnectionClosedError, FrameTooLargeError, InternalError, InvalidRequestError, LocalError, McpError,
  MethodNotFoundError, StructureLimitError, TimeoutError, TransportError,
} from './jsonrpc/errors.ts'
import { checkMessage, isCheckFailure, isJsonObject, isRequestId } from './jsonrpc/guards.ts'
import { createIdGenerator, type IdGenerator } from './jsonrpc/ids.ts'
import type { Inbound, RequestInfo, Transport } from './transport.ts'
import type { ProgressSequence, RequestEvent } from './operators/progress.ts'
import { withTimeout } from './operators/with-timeout.ts'
import type { ShapeKind } from './schema/shape.ts'
import type { ModernMeta } from './schema/modern.ts'
import type { Principal } from './auth.ts'

/** Default request timeout: 60 s without a response or progress. */
export const DEFAULT_REQUEST_TIMEOUT = 60_000

/** Options of one outgoing request. */
export interface RequestOptions {
  /** Milliseconds without a response or progress before the request times out (default 60 s; 0 disables). */
  timeout?: number
  /** Hard maximum in milliseconds, whatever progress arrives. */
  maxTotalTimeout?: number
  /** Whether progress restarts the timeout (default true). */
  resetTimeoutOnProgress?: boolean
  /** Aborting cancels the request on the wire and errors with `CancelledError`. */
  signal?: AbortSignal
  /** Ask for progress (adds `_meta.progressToken`). Default true for `request()`. */
  progress?: boolean
  /** Extra `_meta` fields to send with the request. */
  meta?: Meta
  /** Keep the caller's stack for timeout and closure errors (default: the connection's `captureStack`). */
  captureStack?: boolean
  /** The incoming request this one is made on behalf of (a handler asking the client back). */
  relatedRequestId?: RequestId
}

/** An event of the connection's inspection stream. */
export type InspectionEvent =
  | { type: 'rxmcp.frame.in'; message: unknown }
  | { type: 'rxmcp.frame.out'; message: JsonRpcPayload }
  | { type: 'rxmcp.response.unknown'; id: RequestId | null }
  /** A request (or an unreadable frame) left unanswered because this side writes no responses (see `canRespond`). */
  | { type: 'rxmcp.request.unanswered'; id: RequestId | null; error?: McpError }
  | { type: 'rxmcp.handler.error'; method: string; error: unknown }
  | { type: 'rxmcp.closed'; error?: unknown }

/**
 * One incoming request while its handler runs: its id, method, params, `_meta`, a lazily created
 * AbortSignal, and whether it was cancelled. The request actor of the design, reduced to what the
 * per-message path needs.
 */
export class IncomingRequest {
  /** Set once a response went out or the request was cancelled: nothing more may be sent for it. */
  isDone = false
  /** The handler's Observable subscription, when the handler returned an Observable. */
  subscription: Subscription | undefined = undefined
  /** Created only when a handler reads `signal`, to keep the per-request cost low. */
  #controller: AbortController | undefined = undefined
  /** For a request inside a JSON-RPC batch: where its response goes. */
  batch: BatchCollector | undefined = undefined
  /** Set once the handler reported progress: its response then goes out a turn later (see #respond). */
  hasSentProgress = false
  /** The progress values sent for the request's token (made on the first report), kept increasing. */
  progress: ProgressSequence | undefined = undefined
  /**
   * A modern-era request's own `_meta` (MCP 2026-07-28: version, client capabilities and info, log
   * level), as the gate read and checked it; undefined for a request of the session's negotiated
   * version. Read once, so the handler does not parse it again.
   */
  modernMeta: ModernMeta | undefined = undefined
  /** Who sent the request, when its transport authenticated it (see `Inbound`). */
  principal: Principal | undefined = undefined
  /** The transport's request that carried it (see `Inbound`); undefined when the transport gave none. */
  requestInfo: RequestInfo | undefined = undefined

  /** The protocol version the request speaks when it carries its own (`modernMeta`). */
  get protocolVersion(): string | undefined { return this.modernMeta?.protocolVersion }

  constructor(
    readonly id: RequestId,
    readonly method: string,
    readonly params: JsonObject | undefined,
  ) {}

  /** `params._meta`, when present. */
  get meta(): Meta | undefined {
    const meta = this.params?._meta
    return isJsonObject(meta) ? meta as Meta : undefined
  }

  /** The progress token the requester sent, if any. */
  get progressToken(): string | number | undefined {
    const token = this.meta?.progressToken
    return typeof token === 'string' || typeof token === 'number' ? token : undefined
  }

  /** Aborted when the requester cancels or the connection closes. */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController()
    return this.#controller.signal
  }

  /** Marks the request done without a response and stops its handler. */
  cancel(reason?: unknown): void {
    if (this.isDone) return
    this.isDone = true
    this.subscription?.unsubscribe()
    this.#controller?.abort(reason ?? new CancelledError())
  }
}

/** Collects the responses of one JSON-RPC batch (MCP 2025-03-26) and sends them as one array. */
class BatchCollector {
  readonly responses: JsonRpcResponse[] = []
  constructor(public remaining: number, readonly flush: (responses: JsonRpcResponse[]) => void) {}
  add(response: JsonRpcResponse): void {
    this.responses.push(response)
    this.skip()
  }
  skip(): void {
    if (--this.remaining === 0 && this.responses.length > 0) this.flush(this.responses)
  }
}

/** A request handler: returns a result object, a Promise of one, or an Observable whose last value is one. */
export type RequestHandler = (params: JsonObject | undefined, request: IncomingRequest) => unknown

/** A hook that may refuse an incoming request before its handler runs. */
export type RequestGate = (request: IncomingRequest) => McpError | undefined

/** Options of {@link createConnection}. */
export interface ConnectionOptions {
  /** May refuse incoming requests (the lifecycle and capabilities use it). */
  gateRequest?: RequestGate
  /** May refuse an outgoing request locally, before it reaches the wire. */
  gateOutgoing?: (method: string, params: JsonObject | undefined) => Error | undefined
  /**
   * The handler of a method no `setRequestHandler` registered, looked up per request (a server's
   * methods registered after the connection was made); undefined answers -32601.
   */
  findHandler?: (method: string) => RequestHandler | undefined
  /** Sees every incoming notification before the bus does (the lifecycle uses it). */
  onNotification?: (notification: JsonRpcNotification) => void
  /** Whether a JSON-RPC batch is legal now (MCP 2025-03-26 only). Default: never. */
  allowBatch?: () => boolean
  /**
   * Whether this side may write JSON-RPC responses now (default: always). While it returns false,
   * nothing is answered: an incoming request is dropped before any gate or handler sees it, and a
   * frame that cannot be read gets no error (each goes to `inspect` as `rxmcp.request.unanswered`);
   * responses to this side's own requests and notifications are handled as ever. An MCP 2026-07-28
   * client writes only requests and notifications (stdio, Streamable HTTP), whatever a server sends.
   */
  canRespond?: () => boolean
  /**
   * Shapes what goes out for the peer: each result, each request's params and each notification's
   * params, by kind and method (a legacy session leaves out what its negotiated revision does not
   * define: pass `(kind, method, payload) => shapeForRevision(kind, method, payload, version)` from
   * lib/schema/shape.ts, reading the version when called so it follows the negotiation). Called
   * after `_meta` is added to a request. A result is shaped with the request it answers, and a
   * notification with the incoming request it belongs to (whose `protocolVersion` is set when it
   * spoke its own). Default: everything goes as it is, at no cost.
   */
  shapeOutgoing?: (kind: ShapeKind, method: string, payload: JsonObject, request?: IncomingRequest) => JsonObject
  /**
   * Most entries in one JSON-RPC batch (default 1000). A longer batch is answered with one -32600
   * (id null) before any entry is looked at, so one frame cannot keep the event loop busy for
   * seconds or make the server write an error per entry.
   */
  maxBatchSize?: number
  /** Turns a handler's non-McpError failure into the error to answer with (default: -32603, generic message). */
  toWireError?: (error: unknown, request: IncomingRequest) => McpError
  idGenerator?: IdGenerator
  scheduler?: SchedulerLike
  /** Default timeout of outgoing requests (60 s). */
  timeout?: number
  /**
   * Keep each request's call-site stack, so a `TimeoutError` points at the caller (default false:
   * it costs about 4 µs per request; turn it on while debugging).
   */
  captureStack?: boolean
  /** Receives inspection events; nothing is built for them when absent. */
  inspect?: (event: InspectionEvent) => void
  /** Where errors nobody observes go (default: nowhere but `inspect`). */
  reportUnhandledError?: (error: unknown) => void
}

/** DEFAULTS of {@link ConnectionOptions}. */
export const DEFAULTS = { timeout: DEFAULT_REQUEST_TIMEOUT, maxBatchSize: 1000 } as const

/** An entry of the pending table: the subscriber waiting for a response. */
interface Pending {
  subscriber: Subscriber<RequestEvent<JsonObject>>
  method: string
}

/**
 * A JSON-RPC peer over one transport: the pipeline of the design.
 *
 * ```
 * transport.inbound -> check shape -> response     -> pending table (by id) -> caller's Observable
 *                                  -> request      -> gate -> handler (value | Promise | Observable) -> response
 *                                  -> notification -> cancelled / progress routing -> bus
 * ```
 *
 * Knows JSON-RPC and the MCP rules every session shares (progress tokens, cancellation, ids never
 * reused), nothing of sessions: the lifecycle and capabilities come in through the gates, so the
 * same connection serves stateless requests that carry their context in `_meta`.
 */
export interface Connection {
  /**
   * Sends a request when subscribed: a cold Observable of progress events and then one result.
   * Unsubscribing before the result sends `notifications/cancelled`. Times out (with cancellation
   * on the wire) per {@link RequestOptions}. Errors with `McpError` for an error response,
   * `TimeoutError`, `CancelledError`, `ConnectionClosedError` or a gate's refusal.
   */
  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>>
  /**
   * Sends a notification. Returns the transport's backpressure Promise, if any. `relatedRequestId`
   * names the incoming request it belongs to (a progress report), for multiplexing transports.
   */
  notify(method: string, params?: JsonObject, relatedRequestId?: RequestId): void | Promise<void>
  /** Incoming notifications of one method, as their params. Hot; completes when the connection closes. */
  notifications<P extends JsonObject = JsonObject>(method: string): Observable<P>
  /** Registers the handler of a method, replacing any earlier one. */
  setRequestHandler(method: string, handler: RequestHandler): void
  /** Removes the handler of a method: it then answers -32601. */
  removeRequestHandler(method: string): void
  /** Requests now running, by id. */
  readonly incoming: ReadonlyMap<RequestId, IncomingRequest>
  /** The transport underneath. */
  readonly transport: Transport
  /** True once the transport has closed. */
  readonly isClosed: boolean
  /** Resolves once the transport has closed and every pending request has failed. */
  readonly closed: Promise<void>
  /** Starts reading the transport. Called once; further calls do nothing. */
  start(): void
  /** Closes the transport; pending requests fail with `ConnectionClosedError`. */
  close(): Promise<void>
}

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

class JsonRpcConnection implements Connection {
  readonly #transport: Transport
  readonly #options: ConnectionOptions
  readonly #nextId: IdGenerator
  readonly #inspect: ((event: InspectionEvent) => void) | undefined
  /** Outgoing requests waiting for their response, by id (the id doubles as progress token). */
  readonly #pending = new Map<RequestId, Pending>()
  /** Incoming requests whose handler runs, by id. */
  readonly #incoming = new Map<RequestId, IncomingRequest>()
  readonly #handlers = new Map<string, RequestHandler>()
  /** The notification bus: one Subject per method, made when first asked for. */
  readonly #bus = new Map<string, Subject<JsonObject>>()
  #inboundSubscription: Subscription | undefined
  /** The sender of the frame being handled (see #receive). */
  #principal: Principal | undefined = undefined
  /** The transport's request that carried the frame being handled (see #receive). */
  #requestInfo: RequestInfo | undefined = undefined
  #isStarted = false
  #isClosed = false
  #resolveClosed!: () => void
  readonly closed: Promise<void>

  constructor(transport: Transport, options: ConnectionOptions) {
    this.#transport = transport
    this.#options = options
    this.#nextId = options.idGenerator ?? createIdGenerator()
    this.#inspect = options.inspect
    this.closed = new Promise(resolve => { this.#resolveClosed = resolve })
    this.#handlers.set('ping', () => EMPTY_RESULT)
  }

  get incoming(): ReadonlyMap<RequestId, IncomingRequest> { return this.#incoming }
  get transport(): Transport { return this.#transport }
  get isClosed(): boolean { return this.#isClosed }

  start(): void {
    if (this.#isStarted) return
    this.#isStarted = true
    this.#inboundSubscription = this.#transport.inbound.subscribe({
      next: item => this.#receive(item),
      error: error => this.#finish(error),
      complete: () => this.#finish(undefined),
    })
  }

  async close(): Promise<void> {
    if (!this.#isClosed) {
      try { await this.#transport.close() } finally { this.#finish(undefined) }
    }
    return this.closed
  }

  setRequestHandler(method: string, handler: RequestHandler): void { this.#handlers.set(method, handler) }
  removeRequestHandler(method: string): void { this.#handlers.delete(method) }

  notifications<P extends JsonObject = JsonObject>(method: string): Observable<P> {
    let subject = this.#bus.get(method)
    if (subject === undefined) {
      subject = new Subject<JsonObject>()
      if (this.#isClosed) subject.complete()
      this.#bus.set(method, subject)
    }
    return subject.asObservable() as Observable<P>
  }

  notify(method: string, params?: JsonObject, relatedRequestId?: RequestId): void | Promise<void> {
    if (this.#isClosed) throw new ConnectionClosedError(`Cannot send ${method}: the connection is closed`)
    const shape = this.#options.shapeOutgoing
    const message: JsonRpcNotification = params === undefined ? { jsonrpc: '2.0', method }
      : { jsonrpc: '2.0', method, params: shape === undefined ? params : shape('notification', method, params, relatedRequestId === undefined ? undefined : this.#incoming.get(relatedRequestId)) }
    return this.#send(message, relatedRequestId)
  }

  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>> {
    // With `captureStack`, a timeout or a closed connection points at the caller, not at a timer.
    // Off by default: capturing costs about 4 µs per request, a fifth of a whole echo round trip.
    const callSite = new CallSite(method, options?.captureStack ?? this.#options.captureStack ?? false)
    const timeout = options?.timeout ?? this.#options.timeout ?? DEFAULT_REQUEST_TIMEOUT
    const source = new Observable<RequestEvent<R>>(subscriber => this.#sendRequest(method, params, options, subscriber as Subscriber<RequestEvent<JsonObject>>, callSite))
    const max = options?.maxTotalTimeout
    if (!(timeout > 0) && max === undefined) return source
    const resetOnProgress = options?.resetTimeoutOnProgress !== false
    return source.pipe(withTimeout<RequestEvent<R>>({
      each: timeout,
      max,
      scheduler: this.#options.scheduler,
      resetOn: resetOnProgress ? isProgress : never,
      // bind, not an arrow: no new named function per request (tsx names every arrow it sees).
      error: callSite.timeout.bind(callSite),
    }))
  }

  #sendRequest(method: string, params: JsonObject | undefined, options: RequestOptions | undefined, subscriber: Subscriber<RequestEvent<JsonObject>>, callSite: CallSite): (() => void) | undefined {
    if (this.#isClosed) { subscriber.error(callSite.closed()); return }
    const refusal = this.#options.gateOutgoing?.(method, params)
    if (refusal !== undefined) { subscriber.error(refusal); return }
    const signal = options?.signal
    if (signal?.aborted) { subscriber.error(new CancelledError('Request aborted before it was sent', { cause: signal.reason })); return }
    const id = this.#nextId()
    const wantsProgress = options?.progress !== false
    const meta = options?.meta
    const withMeta = wantsProgress || meta !== undefined
      ? { ...params, _meta: { ...(params?._meta as Meta | undefined), ...meta, ...(wantsProgress ? { progressToken: id } : undefined) } }
      : params
    const shape = this.#options.shapeOutgoing
    const outParams = shape === undefined || withMeta === undefined ? withMeta : shape('request', method, withMeta)
    const message: JsonRpcRequest = outParams === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: outParams }
    this.#pending.set(id, { subscriber, method })
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
      const written = this.#send(message, options?.relatedRequestId)
      if (written !== undefined) written.catch(error => this.#failPending(id, error))
    } catch (error) {
      this.#failPending(id, error)
    }
    return () => {
      if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort)
      // Still pending here means the caller left before the answer: cancel on the wire.
      if (this.#pending.delete(id)) this.#sendCancel(id, method, 'Request cancelled by the caller')
    }
  }

  #sendCancel(id: RequestId, method: string, reason: string): void {
    // MCP lifecycle: the initialize request MUST NOT be cancelled.
    if (method === 'initialize' || this.#isClosed) return
    try {
      const written = this.#send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } })
      written?.catch(error => this.#report(error))
    } catch (error) { this.#report(error) }
  }

  #failPending(id: RequestId, error: unknown): void {
    const pending = this.#pending.get(id)
    if (pending === undefined) return
    this.#pending.delete(id)
    pending.subscriber.error(error instanceof TransportError || error instanceof ConnectionClosedError ? error : new TransportError(`Could not send ${pending.method}`, { cause: error }))
  }

  #send(payload: JsonRpcPayload, relatedRequestId?: RequestId): void | Promise<void> {
    this.#inspect?.({ type: 'rxmcp.frame.out', message: payload })
    return relatedRequestId === undefined ? this.#transport.send(payload) : this.#transport.send(payload, { relatedRequestId })
  }

  #report(error: unknown): void {
    // A write that fails because the transport has just gone is the closing race, not a fault:
    // the transport's end reaches the connection a moment later and fails what is pending.
    if (error instanceof TransportError) { this.#inspect?.({ type: 'rxmcp.handler.error', method: 'send', error }); return }
    this.#options.reportUnhandledError?.(error)
  }

  // ---- incoming ----

  #receive(item: Inbound): void {
    if (item.type === 'invalid') {
      const error = item.error
      if ((error instanceof FrameTooLargeError || error instanceof StructureLimitError) && error.id !== undefined) return this.#receiveTooLarge(error, error.id)
      // Not JSON or not UTF-8 arrives as ParseError (-32700); an oversized frame is an invalid request.
      this.#sendError(null, error instanceof McpError ? error : new InvalidRequestError(`Invalid Request: ${error.message}`))
      return
    }
    const value = item.message
    this.#inspect?.({ type: 'rxmcp.frame.in', message: value })
    // Frames are handled synchronously: each request of this one takes its sender from here.
    this.#principal = item.principal
    this.#requestInfo = item.requestInfo
    if (Array.isArray(value)) return this.#receiveBatch(value)
    this.#receiveOne(value, undefined)
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
    if (error instanceof StructureLimitError) return this.#answerError(id, error, undefined)
    this.#answerError(id, new InvalidRequestError(`Invalid Request: ${error.message}`, { size: error.size, limit: error.limit }), undefined)
  }

  #receiveBatch(values: unknown[]): void {
    if (!(this.#options.allowBatch?.() ?? false)) {
      return this.#sendError(null, new InvalidRequestError('Invalid Request: JSON-RPC batches are not supported in this protocol version'))
    }
    if (values.length === 0) return this.#sendError(null, new InvalidRequestError('Invalid Request: empty batch'))
    const limit = this.#options.maxBatchSize ?? DEFAULTS.maxBatchSize
    if (values.length > limit) {
      return this.#sendError(null, new InvalidRequestError(`Invalid Request: a batch of ${values.length} entries exceeds the limit of ${limit}`, { entries: values.length, limit }))
    }
    // Requests in the batch (including malformed ones, which are answered too) decide when it flushes.
    let answered = 0
    for (const value of values) {
      const checked = checkMessage(value)
      if (isCheckFailure(checked) || ('method' in checked && 'id' in checked)) answered++
    }
    const batch = answered > 0 ? new BatchCollector(answered, responses => this.#sendBatch(responses)) : undefined
    for (const value of values) this.#receiveOne(value, batch)
  }

  #receiveOne(value: unknown, batch: BatchCollector | undefined): void {
    const checked = checkMessage(value)
    if (isCheckFailure(checked)) return this.#answerError(checked.id, checked.error, batch)
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
      if ('error' in response) this.#report(McpError.from(response.error))
      return
    }
    this.#pending.delete(id!)
    if ('error' in response) return pending.subscriber.error(McpError.from(response.error))
    pending.subscriber.next({ type: 'result', result: response.result })
    pending.subscriber.complete()
  }

  #receiveNotification(notification: JsonRpcNotification): void {
    const params = notification.params
    switch (notification.method) {
      case 'notifications/cancelled': {
        const requestId = params?.requestId
        const request = isRequestId(requestId) ? this.#incoming.get(requestId) : undefined
        // MCP lifecycle: initialize cannot be cancelled; unknown or finished ids are ignored.
        if (request !== undefined && request.method !== 'initialize') {
          this.#incoming.delete(request.id)
          request.cancel(typeof params?.reason === 'string' ? new CancelledError(params.reason) : undefined)
          // No response for a cancelled request, not even inside a batch: it gives up its slot.
          request.batch?.skip()
        }
        break
      }
      case 'notifications/progress': {
        const token = params?.progressToken
        const pending = isRequestId(token) ? this.#pending.get(token) : undefined
        if (pending !== undefined && typeof params!.progress === 'number') {
          pending.subscriber.next(params!.total === undefined && params!.message === undefined
            ? { type: 'progress', progress: params!.progress }
            : { type: 'progress', progress: params!.progress, total: params!.total as number | undefined, message: params!.message as string | undefined })
        }
        break
      }
    }
    this.#options.onNotification?.(notification)
    this.#bus.get(notification.method)?.next(params ?? EMPTY_PARAMS)
  }

  #receiveRequest(message: JsonRpcRequest, batch: BatchCollector | undefined): void {
    const id = message.id
    // A side that writes no responses runs nothing it could not answer: the request is dropped.
    if (!this.#canRespond(id, undefined, batch)) return
    if (this.#incoming.has(id)) {
      // MCP basic: ids MUST NOT be reused in a session; the first request keeps running.
      return this.#answerError(id, new InvalidRequestError(`Invalid Request: request id ${JSON.stringify(id)} is already in use`), batch)
    }
    const request = new IncomingRequest(id, message.method, message.params)
    request.batch = batch
    request.principal = this.#principal
    request.requestInfo = this.#requestInfo
    const refusal = this.#options.gateRequest?.(request)
    if (refusal !== undefined) return this.#answerError(id, refusal, batch)
    const handler = this.#handlers.get(message.method) ?? this.#options.findHandler?.(message.method)
    if (handler === undefined) return this.#answerError(id, new MethodNotFoundError(`Method not found: ${message.method}`), batch)
    this.#incoming.set(id, request)
    let outcome: unknown
    try {
      outcome = handler(message.params, request)
    } catch (error) {
      return this.#fail(request, error)
    }
    if (isObservable(outcome)) {
      // The last value is the result; progress goes out through the context meanwhile.
      let last: unknown = undefined
      let hasValue = false
      request.subscription = outcome.subscribe({
        next: value => { last = value; hasValue = true },
        error: error => this.#fail(request, error),
        complete: () => hasValue ? this.#succeed(request, last) : this.#fail(request, new InternalError('Handler completed without a result')),
      })
    } else if (isPromiseLike(outcome)) {
      outcome.then(result => this.#succeed(request, result), error => this.#fail(request, error))
    } else {
      this.#succeed(request, outcome)
    }
  }

  #succeed(request: IncomingRequest, result: unknown): void {
    if (request.isDone) return
    request.isDone = true
    this.#incoming.delete(request.id)
    const shape = this.#options.shapeOutgoing
    const body = !isJsonObject(result) ? EMPTY_RESULT : shape === undefined ? result : shape('result', request.method, result, request)
    this.#respond(request, { jsonrpc: '2.0', id: request.id, result: body })
  }

  #respond(request: IncomingRequest, response: JsonRpcResponse): void {
    if (request.batch !== undefined) return request.batch.add(response)
    if (this.#isClosed) return
    if (!request.hasSentProgress) return this.#sendResponse(response, request.id)
    // A request that reported progress is answered one macrotask later, so the answer does not share
    // a read with its last progress notification: the official SDK client dispatches progress a
    // microtask late and drops it once the response for its token has been handled.
    ;(this.#options.scheduler ?? asyncScheduler).schedule(() => { if (!this.#isClosed) this.#sendResponse(response, request.id) })
  }

  /**
   * Sends a response; one the transport cannot encode (a cycle, a BigInt, a throwing toJSON in the
   * handler's result or error data) is answered with -32603 instead, so the caller never waits for
   * an answer that will not come. Failures of the transport itself are only reported.
   */
  #sendResponse(response: JsonRpcResponse, relatedRequestId: RequestId | undefined): void {
    try {
      const written = this.#send(response, relatedRequestId)
      written?.catch(error => this.#responseFailed(response, relatedRequestId, error))
    } catch (error) {
      this.#responseFailed(response, relatedRequestId, error)
    }
  }

  #responseFailed(response: JsonRpcResponse, relatedRequestId: RequestId | undefined, error: unknown): void {
    if (!isEncodingFailure(error) || this.#isClosed) return this.#report(error)
    this.#inspect?.({ type: 'rxmcp.handler.error', method: 'encode', error })
    this.#sendSafely(unserializable(response.id), relatedRequestId)
  }

  /** Sends a batch's responses as one array; entries that cannot be encoded become -32603 answers. */
  #sendBatch(responses: JsonRpcResponse[]): void {
    if (this.#isClosed) return
    try {
      const written = this.#send(responses)
      written?.catch(error => this.#report(error))
    } catch (error) {
      if (!isEncodingFailure(error)) return this.#report(error)
      this.#inspect?.({ type: 'rxmcp.handler.error', method: 'encode', error })
      // Only on this failure path is each entry encoded alone, to find the ones at fault.
      this.#sendSafely(responses.map(response => isEncodable(response) ? response : unserializable(response.id)))
    }
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
    this.#respond(request, { jsonrpc: '2.0', id: request.id, error: wire.toJSON() })
  }

  #answerError(id: RequestId | null, error: McpError, batch: BatchCollector | undefined): void {
    if (!this.#canRespond(id, error, batch)) return
    const response: JsonRpcResponse = { jsonrpc: '2.0', id, error: error.toJSON() }
    if (batch !== undefined) return batch.add(response)
    if (!this.#isClosed) this.#sendResponse(response, id ?? undefined)
  }

  #sendError(id: RequestId | null, error: McpError): void {
    if (!this.#canRespond(id, error, undefined)) return
    if (!this.#isClosed) this.#sendSafely({ jsonrpc: '2.0', id, error: error.toJSON() })
  }

  /**
   * False when this side writes no responses now (see `ConnectionOptions.canRespond`): what would
   * have been answered (the request `id`, or the `error` about a frame) goes to `inspect` instead,
   * and a batch it belongs to stops waiting for it.
   */
  #canRespond(id: RequestId | null, error: McpError | undefined, batch: BatchCollector | undefined): boolean {
    if (this.#options.canRespond === undefined || this.#options.canRespond()) return true
    this.#inspect?.(error === undefined ? { type: 'rxmcp.request.unanswered', id } : { type: 'rxmcp.request.unanswered', id, error })
    batch?.skip()
    return false
  }

  #sendSafely(payload: JsonRpcPayload, relatedRequestId?: RequestId): void {
    try {
      const written = this.#send(payload, relatedRequestId)
      written?.catch(error => this.#report(error))
    } catch (error) {
      this.#report(error)
    }
  }

  #finish(error: unknown): void {
    if (this.#isClosed) return
    this.#isClosed = true
    this.#inboundSubscription?.unsubscribe()
    this.#inspect?.({ type: 'rxmcp.closed', error })
    // Every pending request fails at once: nobody will answer it now. The error is made only when
    // someone gets it: a one-exchange connection (a modern HTTP request) closes with nothing left.
    if (this.#pending.size > 0 || this.#incoming.size > 0) this.#failAll(error)
    for (const subject of this.#bus.values()) subject.complete()
    this.#resolveClosed()
  }

  #failAll(error: unknown): void {
    const closedError = error instanceof ConnectionClosedError ? error
      : new ConnectionClosedError(error === undefined ? 'Connection closed' : `Connection closed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    const pending = [...this.#pending.values()]
    this.#pending.clear()
    for (const entry of pending) entry.subscriber.error(closedError)
    const incoming = [...this.#incoming.values()]
    this.#incoming.clear()
    for (const request of incoming) request.cancel(closedError)
  }
}

/** Captures where a request was made, so its timeout or closure error points at the caller. */
class CallSite {
  /** Holds the captured frames; V8 formats them only if `.stack` is read, which happens on failure. */
  readonly #holder: { stack?: string } = {}
  constructor(readonly method: string, isCapturing: boolean) {
    if (isCapturing) Error.captureStackTrace?.(this.#holder, JsonRpcConnection.prototype.request)
  }
  #withStack<E extends Error>(error: E): E {
    const stack = this.#holder.stack
    if (stack !== undefined) error.stack = `${error.name}: ${error.message}${stack.slice(stack.indexOf('\n'))}`
    return error
  }
  timeout(limit: 'each' | 'max', ms: number): Error {
    return this.#withStack(new TimeoutError(limit === 'max'
      ? `${this.method} exceeded its maximum total time of ${ms} ms`
      : `${this.method} timed out after ${ms} ms`, ms))
  }
  closed(): Error {
    return this.#withStack(new ConnectionClosedError(`Cannot send ${this.method}: the connection is closed`))
  }
}

const EMPTY_RESULT: JsonObject = Object.freeze({}) as JsonObject
const EMPTY_PARAMS: JsonObject = Object.freeze({}) as JsonObject
const isProgress = (event: RequestEvent<JsonObject>) => event.type === 'progress'
const never = () => false

/** The answer to a request whose result or error could not be encoded. */
function unserializable(id: RequestId | null): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: new InternalError('Internal error: the result could not be serialized').toJSON() }
}

/**
 * True for a failure to encode a message (JSON.stringify's TypeError on a cycle or a BigInt, a
 * RangeError, whatever a toJSON threw), as opposed to the transport's own failure, which is always
 * a local error (TransportError, ConnectionClosedError).
 */
function isEncodingFailure(error: unknown): boolean {
  return !(error instanceof LocalError)
}

function isEncodable(value: unknown): boolean {
  try { JSON.stringify(value); return true } catch { return false }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function'
}

function abortReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message
  return typeof reason === 'string' ? reason : 'Request aborted'
}
