import type { Observable } from '../lib/rx.ts'
import type { Connection, IncomingRequest, RequestOptions } from '../lib/connection.ts'
import type { JsonObject, Meta, ProgressToken, RequestId } from '../lib/jsonrpc/message.ts'
import { ProgressSequence, type ProgressWarning, type RequestEvent } from '../lib/operators/progress.ts'
import type { Principal } from '../lib/auth.ts'
import { bareRequestInfo, type RequestInfo } from '../lib/transport.ts'

/** Which generation of MCP a request arrived under. */
export type Era = 'legacy' | 'modern'

/**
 * What every handler learns about the request it serves, in either era: filled from the session
 * in the legacy era and from `_meta` in the modern one, so handlers are written once.
 */
export interface RequestContext {
  readonly era: Era
  readonly protocolVersion: string
  readonly requestId: RequestId
  readonly method: string
  readonly meta: Meta | undefined
  readonly progressToken: ProgressToken | undefined
  /**
   * The OpenTelemetry trace context the requester propagated in `_meta` (`traceparent`,
   * `tracestate`, `baggage`; MCP 2026-07-28 basic, SEP-414), when `traceparent` is a valid W3C
   * Trace Context value; undefined otherwise.
   */
  readonly trace: TraceContext | undefined
  /** Aborted when the request is cancelled or the connection closes. */
  readonly signal: AbortSignal
  /**
   * Who made the request, when the transport authenticated it (a bearer token over HTTP, the
   * WebSocket upgrade's credentials); undefined without authentication. Same in both eras.
   */
  readonly principal: Principal | undefined
  /**
   * The transport-level request that carried this one: its headers (web-standard `Headers`) and
   * the client's address over HTTP (the POST's own, in both eras, and legacy HTTP+SSE) and
   * WebSocket (the upgrade's); `headers` and `remoteAddress` undefined over stdio and memory.
   * Headers come as the client sent them, credentials included; see {@link RequestInfo}.
   * (`ctx.request` is taken: it sends a request to the peer.)
   */
  readonly requestInfo: RequestInfo
  /**
   * Reports progress to the requester (`notifications/progress`), when it asked for progress.
   * MCP requires `progress` to increase with each notification: a value that is not above the last
   * one sent for the token (or is no finite number) is dropped, and the first such value is
   * reported as a `ProgressWarning`. Does nothing without a progress token or once answered.
   */
  progress(progress: number, total?: number, message?: string): void
  /** Sends a notification to the peer, tied to this request. */
  notify(method: string, params?: JsonObject): void
  /**
   * Ends the stream carrying this request's messages while the request goes on (Streamable HTTP
   * with an event store: the client reconnects with Last-Event-ID and gets the rest). A no-op on
   * transports without such streams.
   */
  closeStream(): void
  /** Sends a request to the peer; cancelled with this request. */
  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>>
}

/** W3C Trace Context (and Baggage) as a requester propagated it in `_meta`. */
export interface TraceContext {
  readonly traceparent: string
  readonly tracestate?: string
  readonly baggage?: string
}

/** version-traceid-parentid-flags, lower-case hex; an all-zero trace or parent id is invalid (W3C Trace Context). */
const TRACEPARENT = /^[\da-f]{2}-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f]{2}$/
/** A tracestate key: a simple key, or tenant@system (W3C Trace Context, tracestate). */
const TRACESTATE_KEY = /^(?:[a-z][a-z\d_*/-]{0,255}|[a-z\d][a-z\d_*/-]{0,240}@[a-z][a-z\d_*/-]{0,13})$/
/** A tracestate value: up to 256 printable ASCII characters but `,` and `=`, not ending in a space. */
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/
/** A baggage key or property key: an HTTP token (W3C Baggage). */
const BAGGAGE_KEY = /^[!#$%&'*+.^_`|~\dA-Za-z-]+$/
/** A baggage value: printable ASCII but space, `"`, `,`, `;` and `\` (those go percent-encoded). */
const BAGGAGE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/
/** Optional whitespace around list separators (W3C: OWS, spaces and tabs). */
const OWS = /^[ \t]+|[ \t]+$/g
/** W3C Trace Context: at most 32 list-members in tracestate. */
const MAX_TRACESTATE_MEMBERS = 32
/** W3C Baggage: at most 64 list-members and 8192 bytes; more is not a baggage rxmcp hands on. */
const MAX_BAGGAGE_MEMBERS = 64
const MAX_BAGGAGE_LENGTH = 8192

/** Whether `value` is a tracestate of W3C Trace Context (list-members `key=value`, empty ones allowed). */
export function isTracestate(value: string): boolean {
  let members = 0
  for (const raw of value.split(',')) {
    const member = raw.replace(OWS, '')
    if (member === '') continue
    const equals = member.indexOf('=')
    if (++members > MAX_TRACESTATE_MEMBERS || equals < 0) return false
    if (!TRACESTATE_KEY.test(member.slice(0, equals)) || !TRACESTATE_VALUE.test(member.slice(equals + 1))) return false
  }
  return true
}

/** Whether `value` is a baggage of W3C Baggage (list-members `key=value`, each with `;property` parts). */
export function isBaggage(value: string): boolean {
  if (value.length > MAX_BAGGAGE_LENGTH) return false
  const members = value.split(',')
  if (members.length > MAX_BAGGAGE_MEMBERS) return false
  return members.every(member => {
    const [pair, ...properties] = member.split(';')
    const equals = pair!.indexOf('=')
    if (equals < 0 || !BAGGAGE_KEY.test(pair!.slice(0, equals).replace(OWS, '')) || !BAGGAGE_VALUE.test(pair!.slice(equals + 1).replace(OWS, ''))) return false
    return properties.every(property => {
      const at = property.indexOf('=')
      if (at < 0) return BAGGAGE_KEY.test(property.replace(OWS, ''))
      return BAGGAGE_KEY.test(property.slice(0, at).replace(OWS, '')) && BAGGAGE_VALUE.test(property.slice(at + 1).replace(OWS, ''))
    })
  })
}

/**
 * The trace context in a request's `_meta`, or undefined when there is none or its `traceparent`
 * is malformed. MCP 2026-07-28 `_meta`: the values at these keys follow W3C Trace Context and W3C
 * Baggage, so a `tracestate` or `baggage` that does not is left out (as W3C tells a vendor to drop
 * a tracestate it cannot parse): a handler never sees, nor passes on, a value that breaks them.
 */
export function traceContextOf(meta: Meta | undefined): TraceContext | undefined {
  const traceparent = meta?.traceparent
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent) || traceparent.startsWith('ff')) return undefined
  const trace: { traceparent: string; tracestate?: string; baggage?: string } = { traceparent }
  const { tracestate, baggage } = meta!
  if (typeof tracestate === 'string' && isTracestate(tracestate)) trace.tracestate = tracestate
  if (typeof baggage === 'string' && isBaggage(baggage)) trace.baggage = baggage
  return trace
}

/**
 * Where a request's own messages go while its handler runs: a session's connection (see
 * {@link connectionHost}), or the reply stream of a request that came with one and belongs to no
 * session (a modern-era HTTP POST). One per session or per such request, never one per message.
 */
export interface ContextHost {
  /** The protocol version the requests served here speak (a modern request's context reads its own). */
  readonly protocolVersion: string
  /** True once nothing more can be sent. */
  readonly isClosed: boolean
  /** Sends a notification tied to the request `relatedRequestId`. */
  notify(method: string, params: JsonObject | undefined, relatedRequestId: RequestId): void | Promise<void>
  /** Sends a request to the peer (the legacy era's server-to-client requests). */
  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>>
  /** The transport's kind, for the {@link RequestInfo} of a request whose transport gave none. */
  readonly transportKind: string | undefined
  /** Where a warning about the handler's use of the context goes (a {@link ProgressWarning}). */
  report?(warning: ProgressWarning): void
}

/** The {@link ContextHost} of the requests arriving on `connection`. */
export function connectionHost(connection: Connection, protocolVersion: () => string, report?: (warning: ProgressWarning) => void): ContextHost {
  return {
    get protocolVersion() { return protocolVersion() },
    get isClosed() { return connection.isClosed },
    notify: (method, params, relatedRequestId) => connection.notify(method, params, relatedRequestId),
    request: (method, params, options) => connection.request(method, params, options),
    transportKind: connection.transport.kind,
    report,
  }
}

/**
 * The context of one incoming request. One small object per request: the AbortSignal is made
 * only when a handler reads it.
 */
export class BaseContext implements RequestContext {
  readonly era: Era = 'legacy'

  constructor(protected readonly host: ContextHost, protected readonly incoming: IncomingRequest) {}

  get protocolVersion(): string { return this.host.protocolVersion }
  get requestId(): RequestId { return this.incoming.id }
  get method(): string { return this.incoming.method }
  get meta(): Meta | undefined { return this.incoming.meta }
  get progressToken(): ProgressToken | undefined { return this.incoming.progressToken }
  get trace(): TraceContext | undefined { return traceContextOf(this.incoming.meta) }
  get signal(): AbortSignal { return this.incoming.signal }
  get principal(): Principal | undefined { return this.incoming.principal }
  get requestInfo(): RequestInfo {
    // A transport that tells nothing (stdio, memory): made when first read, kept with the request.
    return this.incoming.requestInfo ??= bareRequestInfo(this.host.transportKind)
  }

  /**
   * The progress values sent for the request's token so far: a task made from the request goes on
   * with it, since it keeps the token.
   */
  get progressSequence(): ProgressSequence {
    return this.incoming.progress ??= new ProgressSequence(warning => this.host.report?.(warning))
  }

  progress(progress: number, total?: number, message?: string): void {
    const progressToken = this.incoming.progressToken
    if (progressToken === undefined || this.incoming.isDone) return
    // MCP progress: each value must be above the last; one that is not is dropped (and reported).
    if (!this.progressSequence.take(progress)) return
    const params: JsonObject = { progressToken, progress }
    if (total !== undefined) params.total = total
    if (message !== undefined) params.message = message
    // The request's actor lets it out while the request runs; its owner sends it.
    this.incoming.reportProgress(params)
  }

  notify(method: string, params?: JsonObject): void {
    if (this.host.isClosed) return
    const written = this.host.notify(method, params, this.incoming.id)
    written?.catch(() => {})
  }

  closeStream(): void {
    this.incoming.stream?.close()
  }

  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>> {
    return this.host.request<R>(method, params, { signal: this.incoming.signal, relatedRequestId: this.incoming.id, ...options })
  }
}
