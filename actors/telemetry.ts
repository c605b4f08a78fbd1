/**
 * OpenTelemetry for rxmcp, by the semantic conventions for MCP (open-telemetry/
 * semantic-conventions-genai, docs/gen-ai/mcp.md, status Development): a span per request on both
 * sides, the trace context carried in `_meta` both ways, and the conventions' metrics plus a few of
 * the runtime's own (`rxmcp.*`). It is a {@link Instrumentation}, which the server and the client
 * hand to their connections as observers (lib/request-observer.ts): nothing here is called from
 * anywhere else.
 *
 * Loaded only when asked for (`telemetry` in the server's or client's options): this module and
 * `@opentelemetry/api`, an optional peer, are imported then, and not at all otherwise.
 */
import type * as OtelApi from '@opentelemetry/api'
import type { JsonObject, Meta, RequestId } from '../lib/jsonrpc/message.ts'
import { ConnectionClosedError, McpError } from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import type { IncomingRequest } from '../lib/incoming-request.ts'
import type { Transport } from '../lib/transport.ts'
import type { RequestActorEvent } from '../lib/request-logic.ts'
import type { ProgressEvent } from '../lib/operators/progress.ts'
import type { ServerEvent } from '../lib/events.ts'
import { MetaKey, requestMeta } from '../lib/schema/modern.ts'
import { boundCardinality, errorMessage, errorType, metricAttributes, requestAttributes, serverAttributes, spanName, transportAttributes } from './telemetry-attributes.ts'
import { extract, inject } from './trace-propagation.ts'
import type { ConnectionObserver, IncomingWatch, Instrumentation, OutgoingOutcome, OutgoingWatch, TelemetryOptions } from '../lib/request-observer.ts'

type Api = typeof OtelApi
type Attributes = OtelApi.Attributes

/** The instrumentation scope's name and version (the package's). */
const SCOPE = 'rxmcp'
const SCOPE_VERSION = '0.1.0'

/** The conventions' bucket boundaries for the operation and session durations, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

/** Notifications with no span of their own: progress (events of its request's span) and log messages. */
const UNWATCHED_NOTIFICATIONS: ReadonlySet<string> = new Set(['notifications/progress', 'notifications/message'])
/** Task statuses a task does not leave. */
const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled'])

/**
 * Loads `@opentelemetry/api` and makes the instrumentation: with the tracer and meter providers
 * given, else the ones registered globally (by the OpenTelemetry SDK the application started).
 * @throws Error naming the package when `@opentelemetry/api` is not installed.
 */
export async function loadTelemetry(options: true | TelemetryOptions): Promise<Instrumentation> {
  let api: Api
  try {
    api = await import('@opentelemetry/api')
  } catch (error) {
    throw new Error('telemetry needs the optional peer @opentelemetry/api: npm install @opentelemetry/api', { cause: error })
  }
  return new OtelInstrumentation(api, options === true ? {} : options)
}

/** The instruments, made once per instrumentation. */
interface Instruments {
  readonly duration: { readonly server: OtelApi.Histogram; readonly client: OtelApi.Histogram }
  readonly sessionDuration: { readonly server: OtelApi.Histogram; readonly client: OtelApi.Histogram }
  /**
   * Requests in flight by side and method: counted here, reported when metrics are collected (an
   * observable up-down counter), so a call records no attribute set for them.
   */
  readonly active: { readonly server: InFlight; readonly client: InFlight }
  readonly sessions: { readonly server: OtelApi.UpDownCounter; readonly client: OtelApi.UpDownCounter }
  readonly tasks: OtelApi.UpDownCounter
  readonly tasksEnded: OtelApi.Counter
}

type Side = 'server' | 'client'

class OtelInstrumentation implements Instrumentation {
  readonly #api: Api
  readonly #tracer: OtelApi.Tracer
  readonly #meter: OtelApi.Meter
  readonly #instruments: Instruments
  readonly #options: TelemetryOptions
  /** Spans of tasks still running, by task id: each lives from the request that made it to its last status. */
  readonly #taskSpans = new Map<string, { span: OtelApi.Span; status: string }>()

  constructor(api: Api, options: TelemetryOptions) {
    this.#api = api
    this.#options = options
    const tracerProvider = (options.tracerProvider as OtelApi.TracerProvider | undefined) ?? api.trace.getTracerProvider()
    const meterProvider = (options.meterProvider as OtelApi.MeterProvider | undefined) ?? api.metrics.getMeterProvider()
    this.#tracer = tracerProvider.getTracer(SCOPE, SCOPE_VERSION)
    const meter = this.#meter = meterProvider.getMeter(SCOPE, SCOPE_VERSION)
    const histogram = (name: string, description: string) => meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: DURATION_BUCKETS } })
    this.#instruments = {
      duration: {
        server: histogram('mcp.server.operation.duration', 'MCP request or notification duration as observed on the receiver, from its arrival until its answer is sent.'),
        client: histogram('mcp.client.operation.duration', 'The duration of the MCP request or notification as observed on the sender, from sending it until its answer arrives.'),
      },
      sessionDuration: {
        server: histogram('mcp.server.session.duration', 'The duration of the MCP session as observed on the MCP server.'),
        client: histogram('mcp.client.session.duration', 'The duration of the MCP session as observed on the MCP client.'),
      },
      active: {
        server: inFlight(meter, 'rxmcp.server.requests.active', 'Requests the server is handling now.'),
        client: inFlight(meter, 'rxmcp.client.requests.active', 'Requests the client waits on now.'),
      },
      sessions: {
        server: meter.createUpDownCounter('rxmcp.server.sessions.active', { unit: '{session}', description: 'Connections the server holds open now (legacy sessions and stdio or WebSocket peers).' }),
        client: meter.createUpDownCounter('rxmcp.client.sessions.active', { unit: '{session}', description: 'Connections the client holds open now.' }),
      },
      tasks: meter.createUpDownCounter('rxmcp.server.tasks.active', { unit: '{task}', description: 'Tasks not yet ended, by status (working, input_required).' }),
      tasksEnded: meter.createCounter('rxmcp.server.tasks.ended', { unit: '{task}', description: 'Tasks that ended, by final status (completed, failed, cancelled).' }),
    }
  }

  connection(side: Side, transport: Transport, protocolVersion: () => string | undefined): ConnectionObserver {
    return new WatchedConnection(this, side, transport, protocolVersion)
  }

  request(request: IncomingRequest): IncomingWatch | undefined {
    return this.incoming(request, 'server', request.requestInfo?.transport, undefined, request.protocolVersion, true)
  }

  observe(name: string, description: string, read: () => number, unit = '1'): void {
    this.#meter.createObservableGauge(name, { description, unit }).addCallback(result => result.observe(read()))
  }

  serverEvent(event: ServerEvent): void {
    if (event.type !== 'task') return
    const { taskId, status } = event.task
    const known = this.#taskSpans.get(taskId)
    const instruments = this.#instruments
    if (known === undefined) return
    if (known.status === status) return
    instruments.tasks.add(-1, { 'mcp.task.status': known.status })
    known.span.addEvent('mcp.task.status', { 'mcp.task.status': status })
    known.status = status
    if (!TERMINAL.has(status)) {
      instruments.tasks.add(1, { 'mcp.task.status': status })
      return
    }
    this.#taskSpans.delete(taskId)
    instruments.tasksEnded.add(1, { 'mcp.task.status': status })
    known.span.setAttribute('mcp.task.status', status)
    if (status === 'failed') known.span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: 'task failed' })
    if (status !== 'completed') known.span.setAttribute('error.type', status === 'failed' ? 'task_failed' : 'cancelled')
    known.span.end()
  }

  /** A request from the peer: a SERVER span (on either side: a client serves the server's requests too). */
  incoming(request: IncomingRequest, side: Side, transportKind: string | undefined, sessionId: string | undefined, version: string | undefined, isSessionless = false): IncomingWatch {
    const api = this.#api
    const attributes = requestAttributes(request.method, request.params, transportKind, version)
    attributes['jsonrpc.request.id'] = String(request.id)
    if (sessionId !== undefined) attributes['mcp.session.id'] = sessionId
    const address = request.requestInfo?.remoteAddress
    if (address !== undefined) attributes['client.address'] = address
    // The conventions: the caller's context from `_meta` is the parent, the ambient one (an HTTP
    // server span, when HTTP is instrumented) a link.
    const ambient = api.context.active()
    const remote = extract(api, ambient, request.meta)
    const ambientSpan = api.trace.getSpanContext(ambient)
    const links = remote !== undefined && ambientSpan !== undefined && api.isSpanContextValid(ambientSpan) ? [{ context: ambientSpan }] : undefined
    const parent = remote ?? ambient
    const span = this.#tracer.startSpan(spanName(request.method, request.params), { kind: api.SpanKind.SERVER, attributes, links }, parent)
    if (this.#options.captureToolArguments === true && request.method === 'tools/call' && isJsonObject(request.params?.arguments)) {
      span.setAttribute('gen_ai.tool.call.arguments', JSON.stringify(request.params!.arguments))
    }
    return new WatchedIncoming(this, side, api.trace.setSpan(parent, span), span, metricAttributes(attributes), isSessionless)
  }

  /** A request to the peer: a CLIENT span, its context put in `_meta`. */
  outgoing(method: string, params: JsonObject | undefined, side: Side, transportKind: string | undefined, sessionId: string | undefined, version: string | undefined, server?: Attributes): OutgoingWatch {
    const api = this.#api
    const attributes = requestAttributes(method, params, transportKind, version)
    if (server !== undefined) Object.assign(attributes, server)
    if (sessionId !== undefined) attributes['mcp.session.id'] = sessionId
    const parent = api.context.active()
    const span = this.#tracer.startSpan(spanName(method, params), { kind: api.SpanKind.CLIENT, attributes }, parent)
    if (this.#options.captureToolArguments === true && method === 'tools/call' && isJsonObject(params?.arguments)) {
      span.setAttribute('gen_ai.tool.call.arguments', JSON.stringify(params!.arguments))
    }
    return new WatchedOutgoing(this, side, span, inject(api, api.trace.setSpan(parent, span)), metricAttributes(attributes))
  }

  /**
   * A notification worth a span (not progress, which its request's span records as events, nor log
   * messages): received, a SERVER span continuing the sender's context from `_meta`; sent, a
   * CLIENT span whose context goes in its `_meta`. Neither waits for anything: each ends at once,
   * and no duration is recorded.
   */
  notification(direction: 'in' | 'out', method: string, params: JsonObject | undefined, transportKind: string | undefined, sessionId: string | undefined, version: string | undefined): Meta | undefined {
    if (UNWATCHED_NOTIFICATIONS.has(method)) return undefined
    const api = this.#api
    const attributes = requestAttributes(method, params, transportKind, version)
    if (sessionId !== undefined) attributes['mcp.session.id'] = sessionId
    const ambient = api.context.active()
    const parent = direction === 'in' ? extract(api, ambient, requestMeta(params) as Meta | undefined) ?? ambient : ambient
    const span = this.#tracer.startSpan(method, { kind: direction === 'in' ? api.SpanKind.SERVER : api.SpanKind.CLIENT, attributes }, parent)
    span.end()
    return direction === 'out' ? inject(api, api.trace.setSpan(parent, span)) : undefined
  }

  get api(): Api { return this.#api }
  get instruments(): Instruments { return this.#instruments }
  get options(): TelemetryOptions { return this.#options }

  /** A task made by a request (its result was a CreateTaskResult): a span of its own, linked to the request's, until its last status. */
  taskStarted(task: JsonObject, requestSpan: OtelApi.Span, toolName: string | undefined): void {
    const taskId = task.taskId
    if (typeof taskId !== 'string' || this.#taskSpans.has(taskId)) return
    const api = this.#api
    const status = typeof task.status === 'string' ? task.status : 'working'
    const attributes: Attributes = { 'mcp.task.id': taskId, 'mcp.task.status': status }
    if (toolName !== undefined) attributes['gen_ai.tool.name'] = toolName
    // Its own trace root would hide it: it continues the request's trace, linked to the request's span.
    const context = api.trace.setSpan(api.ROOT_CONTEXT, requestSpan)
    const span = this.#tracer.startSpan(toolName === undefined ? 'task' : `task ${toolName}`, { kind: api.SpanKind.INTERNAL, attributes, links: [{ context: requestSpan.spanContext() }] }, context)
    if (TERMINAL.has(status)) {
      this.#instruments.tasksEnded.add(1, { 'mcp.task.status': status })
      span.end()
      return
    }
    this.#instruments.tasks.add(1, { 'mcp.task.status': status })
    this.#taskSpans.set(taskId, { span, status })
  }
}

/** The observer of one connection: its requests both ways, its life as a session. */
class WatchedConnection implements ConnectionObserver {
  readonly #started = performance.now()
  readonly #attributes: Attributes

  constructor(
    readonly telemetry: OtelInstrumentation,
    readonly side: Side,
    readonly transport: Transport,
    readonly protocolVersion: () => string | undefined,
  ) {
    this.#attributes = transportAttributes(transport.kind)
    telemetry.instruments.sessions[side].add(1, this.#attributes)
    this.#server = side === 'client' ? serverAttributes(transport.url) : undefined
  }

  /** Client side: the server's `server.address` and `server.port`, from the transport's URL. */
  readonly #server: Attributes | undefined

  incoming(request: IncomingRequest): IncomingWatch {
    return this.telemetry.incoming(request, this.side, this.transport.kind, this.transport.sessionId, request.protocolVersion ?? this.protocolVersion())
  }

  outgoing(method: string, params: JsonObject | undefined): OutgoingWatch {
    // A modern request names its own version in `_meta`; a legacy one goes in the session's.
    const own = requestMeta(params)?.[MetaKey.protocolVersion]
    return this.telemetry.outgoing(method, params, this.side, this.transport.kind, this.transport.sessionId, typeof own === 'string' ? own : this.protocolVersion(), this.#server)
  }

  notification(direction: 'in' | 'out', method: string, params: JsonObject | undefined): Meta | undefined {
    return this.telemetry.notification(direction, method, params, this.transport.kind, this.transport.sessionId, this.protocolVersion())
  }

  closed(error: unknown): void {
    const attributes = { ...this.#attributes }
    const version = this.protocolVersion()
    if (version !== undefined) attributes['mcp.protocol.version'] = version
    if (error !== undefined) attributes['error.type'] = errorType(error)
    const instruments = this.telemetry.instruments
    instruments.sessionDuration[this.side].record((performance.now() - this.#started) / 1000, attributes)
    instruments.sessions[this.side].add(-1, this.#attributes)
  }
}

/** One incoming request's span and metrics, told its life by the connection. */
class WatchedIncoming implements IncomingWatch {
  readonly #started = performance.now()
  #isEnded = false

  constructor(
    readonly telemetry: OtelInstrumentation,
    readonly side: Side,
    readonly context: OtelApi.Context,
    readonly span: OtelApi.Span,
    readonly metricAttributes: Attributes,
    /**
     * A request of no connection (a modern-era HTTP request): its response stream closing is how
     * its client cancels it (MCP 2026-07-28), so that ends it `cancelled`, not `connection_closed`.
     */
    readonly isSessionless: boolean,
  ) {}

  /** True once its handler ran: only then is it in flight (a refused request never is, so no made-up method is counted). */
  #isRunning = false

  run<T>(work: () => T): T {
    this.#isRunning = true
    this.telemetry.instruments.active[this.side].add(this.metricAttributes['mcp.method.name'] as string, 1)
    return this.telemetry.api.context.with(this.context, work)
  }

  event(event: RequestActorEvent): void {
    if (this.#isEnded) return
    const span = this.span
    switch (event.type) {
      case 'progress': return progressEvent(span, event.params.progress, event.params.total)
      case 'result': {
        const result = isJsonObject(event.result) ? event.result : undefined
        const method = this.metricAttributes['mcp.method.name']
        if (method === 'initialize') negotiated(span, this.metricAttributes, result)
        if (result?.resultType === 'input_required') {
          span.addEvent('mcp.input_required', { 'mcp.input_required.keys': isJsonObject(result.inputRequests) ? Object.keys(result.inputRequests) : [] })
        }
        const task = method === 'tools/call' ? createdTask(result) : undefined
        if (task !== undefined) {
          span.setAttribute('mcp.task.id', String(task.taskId))
          this.telemetry.taskStarted(task, span, this.metricAttributes['gen_ai.tool.name'] as string | undefined)
        }
        if (method === 'tools/call' && result?.isError === true) return this.#end('tool_error', undefined, 'tool_error')
        if (this.telemetry.options.captureToolArguments === true && method === 'tools/call' && result !== undefined) {
          span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result))
        }
        return this.#end(undefined, undefined, undefined)
      }
      case 'error': return this.#end(errorType(event.error), event.error, errorMessage(event.error))
      case 'cancel': {
        span.addEvent('mcp.cancelled', event.reason instanceof Error ? { 'mcp.cancel.reason': event.reason.message } : undefined)
        return this.#end(event.reason instanceof ConnectionClosedError && !this.isSessionless ? 'connection_closed' : 'cancelled', event.reason, 'cancelled')
      }
      case 'closed': return this.#end('connection_closed', event.error, 'connection closed')
    }
  }

  #end(type: string | undefined, error: unknown, message: string | undefined): void {
    this.#isEnded = true
    const { span, telemetry, side } = this
    const attributes = type === undefined ? this.metricAttributes : { ...this.metricAttributes, 'error.type': type }
    if (type !== undefined) {
      span.setAttribute('error.type', type)
      if (error instanceof McpError) {
        span.setAttribute('rpc.response.status_code', String(error.code))
        attributes['rpc.response.status_code'] = String(error.code)
        boundCardinality(attributes, error.code)
      }
      span.setStatus({ code: telemetry.api.SpanStatusCode.ERROR, message })
    }
    span.end()
    const instruments = telemetry.instruments
    instruments.duration[side].record((performance.now() - this.#started) / 1000, attributes)
    if (this.#isRunning) instruments.active[side].add(this.metricAttributes['mcp.method.name'] as string, -1)
  }
}

/** One outgoing request's span and metrics. */
class WatchedOutgoing implements OutgoingWatch {
  readonly #started = performance.now()

  constructor(
    readonly telemetry: OtelInstrumentation,
    readonly side: Side,
    readonly span: OtelApi.Span,
    readonly meta: Meta | undefined,
    readonly metricAttributes: Attributes,
  ) {
    telemetry.instruments.active[side].add(metricAttributes['mcp.method.name'] as string, 1)
  }

  sent(id: RequestId): void {
    this.span.setAttribute('jsonrpc.request.id', String(id))
  }

  progress(event: ProgressEvent): void {
    progressEvent(this.span, event.progress, event.total)
  }

  end(outcome: OutgoingOutcome): void {
    const { span, telemetry, side } = this
    const method = this.metricAttributes['mcp.method.name']
    let type: string | undefined
    let message: string | undefined
    if (outcome.type === 'result') {
      const result = outcome.result
      if (method === 'initialize') negotiated(span, this.metricAttributes, result)
      if (result.resultType === 'input_required') span.addEvent('mcp.input_required')
      const task = method === 'tools/call' ? createdTask(result) : undefined
      if (task !== undefined) span.setAttribute('mcp.task.id', String(task.taskId))
      if (method === 'tools/call' && result.isError === true) type = message = 'tool_error'
    } else if (outcome.type === 'error') {
      type = errorType(outcome.error)
      message = errorMessage(outcome.error)
      if (outcome.error instanceof McpError) span.setAttribute('rpc.response.status_code', String(outcome.error.code))
    } else {
      type = message = 'cancelled'
    }
    const attributes = type === undefined ? this.metricAttributes : { ...this.metricAttributes, 'error.type': type }
    if (type !== undefined) {
      span.setAttribute('error.type', type)
      if (outcome.type === 'error' && outcome.error instanceof McpError) attributes['rpc.response.status_code'] = String(outcome.error.code)
      span.setStatus({ code: telemetry.api.SpanStatusCode.ERROR, message })
    }
    span.end()
    const instruments = telemetry.instruments
    instruments.duration[side].record((performance.now() - this.#started) / 1000, attributes)
    instruments.active[side].add(method as string, -1)
  }
}

/** A count of requests in flight by method, reported as an observable up-down counter. */
interface InFlight { add(method: string, delta: number): void }

function inFlight(meter: OtelApi.Meter, name: string, description: string): InFlight {
  const counts = new Map<string, number>()
  meter.createObservableUpDownCounter(name, { unit: '{request}', description }).addCallback(result => {
    for (const [method, count] of counts) result.observe(count, { 'mcp.method.name': method })
  })
  // A method keeps its entry at 0 (an observable instrument that stops reporting a set keeps its
  // last value): the methods counted are those that ran a handler or were sent, a bounded set.
  return { add: (method, delta) => { counts.set(method, (counts.get(method) ?? 0) + delta) } }
}

/**
 * The task a CreateTaskResult made: `task` in the legacy era (MCP 2025-11-25), the result itself
 * (`resultType: 'task'`) in the modern era (MCP 2026-07-28); undefined for any other result.
 */
function createdTask(result: JsonObject | undefined): JsonObject | undefined {
  if (result === undefined) return undefined
  if (isJsonObject(result.task)) return result.task
  return result.resultType === 'task' && typeof result.taskId === 'string' ? result : undefined
}

/**
 * An initialize answered: the version it negotiated is the request's `mcp.protocol.version` (the
 * server knew none when the request arrived; the client asked for one the server may have lowered).
 */
function negotiated(span: OtelApi.Span, metricAttributes: Attributes, result: JsonObject | undefined): void {
  const version = result?.protocolVersion
  if (typeof version !== 'string') return
  span.setAttribute('mcp.protocol.version', version)
  metricAttributes['mcp.protocol.version'] = version
}

/** A progress notification as an `mcp.progress` event of its request's span. */
function progressEvent(span: OtelApi.Span, progress: unknown, total: unknown): void {
  const attributes: Attributes = {}
  if (typeof progress === 'number') attributes['mcp.progress.value'] = progress
  if (typeof total === 'number') attributes['mcp.progress.total'] = total
  span.addEvent('mcp.progress', attributes)
}

