import type { Observable } from './rx.ts'
import type { JsonRpcMessage, JsonRpcPayload, RequestId } from './jsonrpc/message.ts'
import type { McpError, LocalError } from './jsonrpc/errors.ts'
import type { Principal } from './auth.ts'
import type { AuthorizationContext } from './authorization-context.ts'

/**
 * One decoded item from a transport: a JSON value that still has to be checked as JSON-RPC, or a
 * frame that could not be decoded (not JSON, invalid UTF-8, over the size limit).
 *
 * Transports decode bytes with a codec from `lib/codec`; they never look inside the value.
 */
export type Inbound =
  /**
   * `principal`: who sent it, when the transport authenticated the frame (HTTP bearer token,
   * WebSocket upgrade). `requestInfo`: the transport's request that carried it (the HTTP POST, the
   * WebSocket upgrade), which every request of the frame sees as `ctx.requestInfo` and every
   * response as `ResultEvent.requestInfo` (the HTTP client transport gives each frame one that
   * names only its `transport`: `'streamable-http'` or `'sse'`).
   */
  | ({ type: 'message' } & Envelope)
  | { type: 'invalid'; error: McpError | LocalError }
  /**
   * The record of a session kept beyond this process, given before any message of it: a listener
   * that took the session over from another instance (which drained) emits it first, so the
   * server goes on with the session at once (its subscriptions receive) rather than at the
   * client's next message. Only listeners that share their sessions emit it.
   */
  | { type: 'session'; session: SharedSession }

/** What a codec makes of one frame: a message, or an invalid frame (never a `session` item). */
export type Decoded = Exclude<Inbound, { type: 'session' }>

/**
 * What a handler learns of the transport-level request that carried its MCP request
 * (`ctx.requestInfo`): read-only, in both eras.
 *
 * - Streamable HTTP (either era) and the legacy HTTP+SSE `/messages` endpoint: the headers of the
 *   POST that carried this very request (each POST its own, not the initialize request's), and the
 *   client's address as the listener resolved it for its per-client budgets (the `clientAddress`
 *   option behind a trusted proxy, else the socket's).
 * - WebSocket: the headers of the upgrade request, and the client's address resolved the same way.
 * - stdio, memory, and transports that tell nothing: `headers` and `remoteAddress` are undefined.
 *
 * The headers are given as received, credentials included (`Authorization`, `Cookie`, `DPoP`):
 * who the caller is belongs in `ctx.principal`, which the listener's `auth` verified; a header is
 * only what the client sent. A transport builds `headers` when a handler first reads it.
 */
export interface RequestInfo {
  /**
   * The transport's kind (`'streamable-http'`, `'sse'`, `'websocket'`, `'stdio'`, `'memory'`, or a
   * custom transport's `kind`); undefined for a transport that names none.
   */
  readonly transport: string | undefined
  /** The request's headers (web-standard `Headers`, a copy of its own per request); undefined when the transport has none. */
  readonly headers: Headers | undefined
  /** The client's network address (an IP); undefined when the transport has none or cannot tell. */
  readonly remoteAddress: string | undefined
}

/**
 * The {@link RequestInfo} of a request whose transport told nothing about it (stdio, memory, a
 * custom transport): its kind only.
 */
export function bareRequestInfo(transport: string | undefined): RequestInfo {
  return Object.freeze({ transport, headers: undefined, remoteAddress: undefined })
}

/**
 * What the connection tells a transport about one outgoing message, beyond the message itself:
 * everything a transport needs per message travels here, so no transport is told anything apart.
 * A transport uses what it has a place for and ignores the rest (stdio, memory and WebSocket
 * ignore it all). The connection passes no object when it has nothing to tell.
 */
export interface SendOptions {
  /**
   * The incoming request this message answers or belongs to (its progress, its requests back).
   * Transports that multiplex (Streamable HTTP: one SSE stream per POST) route by it.
   */
  relatedRequestId?: RequestId
  /**
   * The protocol version negotiated for the messages of this connection (a legacy session's, from
   * the initialize answer on; `ConnectionOptions.protocolVersion`), undefined while none is. The
   * Streamable HTTP client sends it as `MCP-Protocol-Version` (on this POST and the session's later
   * GET and DELETE); the Streamable HTTP server session checks the header of later POSTs against
   * it, from the first message that carries it (the initialize answer). A modern request carries
   * its own version in `_meta`, which the HTTP client reads from the message instead.
   */
  protocolVersion?: string
  /**
   * Extra transport headers for this one message (the `Mcp-Param-*` headers the client mirrors
   * from a modern tools/call's arguments, or `RequestOptions.headers`). The HTTP client adds them
   * to the POST that carries the message, under its standard headers; transports without headers
   * ignore them.
   */
  headers?: Record<string, string>
}

/**
 * A decoded message as a transport hands it over, with what came with it: who sent it (when the
 * transport authenticated it) and the transport-level request that carried it.
 */
export interface Envelope {
  message: unknown
  principal?: Principal
  requestInfo?: RequestInfo
  /**
   * The stream that carries the answers to this message, where the transport has one per message
   * that can be ended and resumed (a Streamable HTTP POST's SSE stream with an event store): a
   * handler ends it with `ctx.closeStream()` while its request goes on, and the client resumes it
   * (SSE polling, SEP-1699). Undefined elsewhere; `ctx.closeStream()` is then a no-op.
   */
  stream?: ResponseStream
  /**
   * The record of the legacy session this message belongs to, when the listener keeps its sessions
   * beyond this process (the same object on every message of the session); see {@link SharedSession}.
   */
  session?: SharedSession
  /**
   * The request of this side that the message was sent about, when the transport knows it (a
   * Streamable HTTP client: what arrives on the SSE stream of a POST that carried one request).
   * The connection gives a server's request so tied to that request's `answerInput`.
   */
  relatedRequestId?: RequestId
}

/** See {@link Envelope.stream}. */
export interface ResponseStream {
  /** Ends the stream without ending its requests; what they send meanwhile is replayed on resumption. */
  close(): void
}

/**
 * The reply stream of one request that came with its own and belongs to no session (a modern-era
 * Streamable HTTP POST): the server writes that request's notifications and then its response,
 * which ends it. Nothing else goes on it.
 */
export interface Reply {
  /** Writes one message; throws `TransportError` once the reply is over. */
  send(message: JsonRpcMessage): void
  /** True once the reply is over (answered, or the client went away). */
  readonly isClosed: boolean
  /** Resolves when the reply is over; when that is before the response, the request is cancelled. */
  readonly closed: Promise<void>
  /**
   * Ends the reply from this side (the listener closing, or a bridge whose child went away); one
   * not answered yet tells its client that no answer is coming, as its transport can.
   */
  close(): void
}

/** A request with its own {@link Reply}: see {@link TransportServer.requests}. */
export interface ReplyEnvelope extends Envelope {
  readonly reply: Reply
}

/**
 * A source of transports, one per client session: what an HTTP or WebSocket listener is.
 * `McpServer.listen` accepts one and serves every transport it emits.
 */
export interface TransportServer {
  /** Emits a transport for each new session. Hot; completes when the server closes. */
  readonly connections: Observable<Transport>
  /**
   * Emits each request that comes with its own reply stream and belongs to no session (a modern-era
   * Streamable HTTP POST): the server serves it without a session or connection of its own.
   * Listeners that carry only sessions leave it out.
   */
  readonly requests?: Observable<ReplyEnvelope>
  /**
   * Optional: numbers the listener can report about itself, read when metrics are collected (the
   * server hands each to its telemetry as a gauge; without telemetry nothing reads them). Each
   * read must be cheap: a counter, not a scan.
   */
  gauges?(): readonly TransportGauge[]
  /** Starts accepting (binds a port); resolves once it does. */
  start?(): Promise<void>
  /**
   * Optional: leaves gracefully (a rolling restart), then closes. Its health check fails first,
   * then it stops taking new sessions, lets the requests in flight finish (up to
   * `DrainOptions.timeoutMs`), hands each session over to the other instances as soon as it has
   * no request in flight (or ends it, where it cannot go on elsewhere), and closes its streams
   * and connections so that clients resume elsewhere. `McpServer.drain` calls it; a listener
   * without it is closed.
   */
  drain?(options?: DrainOptions): Promise<void>
  /** Stops accepting and closes every session. */
  close(): Promise<void>
}

/** Options of a drain (`McpServer.drain`, `TransportServer.drain`); defaults in `DRAIN_DEFAULTS`. */
export interface DrainOptions {
  /**
   * Ms the requests in flight have to finish (default 30,000). Past it, what is still running is
   * left: a session still busy is handed over anyway (its client is told to send those requests
   * again), a connection is closed.
   */
  timeoutMs?: number
  /**
   * Ms between the health check failing and no longer taking new sessions (default 0): the time
   * the balancer needs to notice (a Kubernetes readiness probe's period times its failure threshold).
   * Everything is served as before meanwhile.
   */
  healthGraceMs?: number
  /** Told of each step, for a log (`draining`, `sessions handed over: 12`, ...). Default: nothing. */
  onProgress?: (step: string) => void
}

/** DEFAULTS of {@link DrainOptions}. */
export const DRAIN_DEFAULTS = { timeoutMs: 30_000, healthGraceMs: 0 } as const

/** A number a {@link TransportServer} reports about itself (see {@link TransportServer.gauges}). */
export interface TransportGauge {
  /** The metric's name (`rxmcp.*` for what the semantic conventions do not define). */
  readonly name: string
  readonly description: string
  /** The UCUM unit; default `'1'` (a count). */
  readonly unit?: string
  /** The value now. */
  read(): number
}

/**
 * The contract every transport implements: the only extension point for I/O.
 *
 * - `inbound` is subscribed to once, by the connection. Subscribing starts delivery; it emits one
 *   {@link Inbound} per decoded frame, completes when the peer closes cleanly, and errors with a
 *   `TransportError` on failure. Unsubscribing stops reading.
 * - `send` writes one message (or a batch) as one frame, with what the connection knows of it
 *   ({@link SendOptions}: the request it belongs to, the negotiated protocol version, extra
 *   headers; absent when there is nothing). It returns a Promise when the caller should wait (the
 *   sink is full), otherwise nothing; it throws or rejects with `TransportError` when the
 *   transport is closed.
 * - `close` ends the transport; `inbound` completes. Calling it twice is harmless.
 *
 * @example
 * const transport: Transport = {
 *   inbound: webSocketMessages.pipe(map(text => decodeJson(text))),
 *   send: message => socket.send(JSON.stringify(message)),
 *   close: async () => socket.close(),
 * }
 */
export interface Transport {
  readonly inbound: Observable<Inbound>
  send(payload: JsonRpcPayload, options?: SendOptions): void | Promise<void>
  close(): Promise<void>
  /**
   * Optional, client transports that send credentials: the authorization context the next request
   * goes out in (see lib/authorization-context.ts), `''` for none, null when the transport cannot
   * tell. The client's cache keeps a `private` result only for the context it came in
   * (MCP 2026-07-28 caching). A transport without it is one anonymous context (stdio, memory).
   */
  authorizationContext?(): AuthorizationContext | Promise<AuthorizationContext>
  /** Optional: a short name for inspection and errors (`'stdio'`, `'memory'`). */
  readonly kind?: string
  /**
   * Optional: the MCP session id this transport carries, once it has one (Streamable HTTP's
   * `Mcp-Session-Id`); telemetry records it as `mcp.session.id`.
   */
  readonly sessionId?: string
  /**
   * Optional, client transports that connect to a server by URL (Streamable HTTP, WebSocket): that
   * URL; telemetry records its host and port as `server.address` and `server.port`.
   */
  readonly url?: string
  /**
   * Optional: milliseconds this transport can still send once its `inbound` has completed, for a
   * transport whose input can end while its output stays open (stdio: stdin ended, stdout open).
   * The connection then answers the requests it is running before it closes, for at most this long;
   * what it asked the peer fails at once, as nothing more will be read. Undefined or 0: the
   * connection closes when `inbound` completes, stopping its requests.
   */
  readonly answersAfterEndMs?: number
}

/**
 * A legacy session kept beyond this process (a listener sharing its sessions between instances
 * through Redis), as every message of the session carries it ({@link Envelope.session}). The
 * server names its session by `id`, starts from `restored` when the session began on another
 * instance, and hands every change of the session's negotiated state to `save`. The state is
 * opaque to the transport.
 */
export interface SharedSession {
  /** The session's id across every instance (the listener's session id). */
  readonly id: string
  /** What `save` last stored (JSON text), when this instance continues a session another one started. */
  readonly restored?: string
  /** Stores the session's state as JSON text (negotiated version, client capabilities and info, log level, subscriptions). */
  save(state: string): void
  /**
   * Set by the listener once it stopped carrying the session, which goes on on another instance:
   * the server then keeps what the session owns (its tasks) instead of ending it with the session.
   */
  isHandedOver?: boolean
}
