import type { JsonObject, Meta, RequestId } from './jsonrpc/message.ts'
import type { Transport } from './transport.ts'
import type { ServerEvent } from './events.ts'
import type { IncomingRequest } from './incoming-request.ts'
import type { IncomingWatch } from './incoming-watch.ts'
import type { ProgressEvent } from './operators/progress.ts'

/**
 * What watches the requests of one connection, both ways, and the connection's life: the one place
 * instrumentation plugs into (OpenTelemetry's, actors/telemetry.ts, is one), given as
 * `ConnectionOptions.observer`; a request that belongs to no connection (a modern-era HTTP request)
 * is watched through {@link ConnectionObserver.incoming} alone. Nothing is called, and nothing is
 * made per request, when there is none.
 */
export interface ConnectionObserver {
  /**
   * A request from the peer, read and about to be handled (or refused): what it returns runs the
   * handler and hears how the request ends; undefined leaves the request unwatched.
   */
  incoming(request: IncomingRequest): IncomingWatch | undefined
  /**
   * A request to the peer, about to go out: what it returns adds to its `_meta` (the trace context)
   * and hears how it ends; undefined leaves it unwatched.
   */
  outgoing(method: string, params: JsonObject | undefined): OutgoingWatch | undefined
  /** The connection closed; `error` says why when it failed. */
  closed?(error: unknown): void
}

// In a leaf file of its own: lib/incoming-request.ts holds a request's watch, and this file names IncomingRequest.
export type { IncomingWatch } from './incoming-watch.ts'

/** One outgoing request, watched (see {@link ConnectionObserver.outgoing}). */
export interface OutgoingWatch {
  /** Added to the request's `_meta` (over what the caller gave). */
  readonly meta?: Meta
  /** The request went out with this id. */
  sent?(id: RequestId): void
  /** A progress notification for the request arrived. */
  progress?(event: ProgressEvent): void
  /**
   * How it ended: its result, the error the caller got (a JSON-RPC error, a timeout, a
   * cancellation, the connection closing), or `abandoned` when the caller stopped waiting first.
   */
  end(outcome: OutgoingOutcome): void
}

export type OutgoingOutcome =
  | { readonly type: 'result'; readonly result: JsonObject }
  | { readonly type: 'error'; readonly error: unknown }
  | { readonly type: 'abandoned' }

/** `_meta` with `added` over it (the watcher's trace context over the caller's own). */
export function withMeta(meta: Meta | undefined, added: Meta | undefined): Meta | undefined {
  return added === undefined ? meta : meta === undefined ? added : { ...meta, ...added }
}

/**
 * What makes the observers of a server's or a client's connections (telemetry): given as their
 * `telemetry` option, it is loaded when first needed (actors/telemetry.ts), and nothing of it
 * exists when the option is absent.
 */
export interface Instrumentation {
  /**
   * The observer of one connection: on the server a legacy session or a stdio or WebSocket peer, on
   * the client its connection to the server. `protocolVersion` reads the version negotiated so far.
   */
  connection(side: 'server' | 'client', transport: Transport, protocolVersion: () => string | undefined): ConnectionObserver
  /** Watches a request that belongs to no connection (a modern-era Streamable HTTP request). */
  request(request: IncomingRequest): IncomingWatch | undefined
  /** An event of the server's bus (task status changes end or advance the tasks' spans). */
  serverEvent?(event: ServerEvent): void
  /**
   * Reports a number read when metrics are collected, as a gauge (`rxmcp.*`: SSE events stored,
   * bridge children).
   */
  observe?(name: string, description: string, read: () => number, unit?: string): void
}

/**
 * How telemetry is switched on: `telemetry: true` uses the tracer and meter providers registered
 * globally (by the OpenTelemetry SDK the application started); these options name others.
 */
export interface TelemetryOptions {
  /** An OpenTelemetry `TracerProvider` (default: the global one). */
  tracerProvider?: { getTracer(name: string, version?: string): unknown }
  /** An OpenTelemetry `MeterProvider` (default: the global one). */
  meterProvider?: { getMeter(name: string, version?: string): unknown }
  /**
   * Record tool arguments and results on the spans (`gen_ai.tool.call.arguments` and `.result`,
   * opt-in in the conventions: they may hold sensitive data). Default false.
   */
  captureToolArguments?: boolean
}
