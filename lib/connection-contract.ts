import type { Observable, SchedulerLike } from './rx.ts'
import type { JsonObject, JsonRpcNotification, Meta, RequestId } from './jsonrpc/message.ts'
import type { McpError } from './jsonrpc/errors.ts'
import type { IdGenerator } from './jsonrpc/ids.ts'
import type { SharedSession, Transport } from './transport.ts'
import type { RequestEvent } from './operators/progress.ts'
import type { ShapeKind } from './schema/shape.ts'
import type { IncomingRequest } from './incoming-request.ts'
import type { InspectionEvent } from './inspection-event.ts'
import type { ConnectionObserver } from './request-observer.ts'
import type { ActorRef, ActorSystem } from './actor/system.ts'

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
  /**
   * Extra transport headers for this request's message (`SendOptions.headers`: Streamable HTTP
   * adds them to its POST; transports without headers ignore them). A modern client adds the
   * `Mcp-Param-*` headers of a tools/call here itself.
   */
  headers?: Record<string, string>
  /**
   * Answers the peer's requests made while serving this one (`sampling/createMessage`,
   * `elicitation/create`, `roots/list`) instead of the handlers registered for them: the
   * `input_required` rounds of a modern request, and the live requests of a legacy peer the
   * connection can tie to this one (the transport says so: a Streamable HTTP POST's stream; or this
   * is the only request with `answerInput` in flight). A proxy answers with its caller's context.
   */
  answerInput?: InputAnswerer
  /**
   * Takes the peer's log messages (`notifications/message` params) about this request instead of
   * the notification bus: those the transport ties to it (a Streamable HTTP POST's stream, a
   * memory pair), or, when the transport ties nothing, every one while this is the only request
   * with `onLog` in flight. A proxy gives them to its caller as the caller's own.
   */
  onLog?: (params: JsonObject) => void
}

/** See {@link RequestOptions.answerInput}: the peer's request (method, params) in, its result out; `signal` aborts when it is cancelled. */
export type InputAnswerer = (method: string, params: JsonObject | undefined, signal: AbortSignal) => Promise<JsonObject>

/** A request handler: returns a result object, a Promise of one, or an Observable whose last value is one. */
export type RequestHandler = (params: JsonObject | undefined, request: IncomingRequest) => unknown

/** A hook that may refuse an incoming request before its handler runs. */
export type RequestGate = (request: IncomingRequest) => McpError | undefined

/**
 * Options of {@link createConnection}. The hooks are called as methods of this object, so it may
 * be an instance of a class whose methods they are (one object per connection, not a closure each).
 */
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
  /**
   * The protocol version negotiated for this connection's messages, read at each send and passed
   * to the transport as `SendOptions.protocolVersion` (HTTP: `MCP-Protocol-Version`); undefined
   * while none is (before the initialize answer). Keep it cheap: it runs once per message.
   */
  protocolVersion?: () => string | undefined
  /**
   * Called with the shared-session record a message came with (`Envelope.session`), before the
   * message is handled: the server's session adopts it on the first (its id, its restored state).
   */
  sharedSession?: (shared: SharedSession) => void
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
  /**
   * Where time comes from: outgoing requests' timeouts (default: `actors.system`'s scheduler, else
   * RxJS's async scheduler) and the turn a response waits after progress (default async).
   */
  scheduler?: SchedulerLike
  /**
   * The actor system each incoming request is spawned in as an actor (lib/request-logic.ts), and
   * the parent it is spawned under (a server's session; read at each request). Without them the
   * connection makes a small system of its own with its first request, whose requests are roots.
   */
  actors?: { readonly system: ActorSystem; readonly parent?: ActorRef<never> }
  /** Default timeout of outgoing requests (60 s). */
  timeout?: number
  /**
   * Keep each request's call-site stack, so a `TimeoutError` points at the caller (default false:
   * it costs about 4 µs per request; turn it on while debugging).
   */
  captureStack?: boolean
  /** Receives inspection events; nothing is built for them when absent. */
  inspect?: (event: InspectionEvent) => void
  /**
   * Watches every request both ways and the connection's end (telemetry: spans, metrics, the trace
   * context in `_meta`); see lib/request-observer.ts. Nothing is made per request without one.
   */
  observer?: ConnectionObserver
  /** Where errors nobody observes go (default: nowhere but `inspect`). */
  reportUnhandledError?: (error: unknown) => void
}

/** DEFAULTS of {@link ConnectionOptions}. */
export const DEFAULTS = { timeout: DEFAULT_REQUEST_TIMEOUT, maxBatchSize: 1000 } as const

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
