/**
 * A request served without a session: a modern-era request over Streamable HTTP (MCP 2026-07-28:
 * a POST that carries one request and gets its answer on its own response), or a legacy one on a
 * `stateless` listener. Nothing is built for it but the request, its scope and its actor (a root
 * of `server.system`, running lib/request-logic.ts): no Session, no Connection, no table of routes. It is checked as JSON-RPC, classified once ({@link classify}),
 * its handler looked up once, its outcome normalised once, and its notifications and response
 * written to the request's {@link Reply}.
 */
import { asyncScheduler, throwError, type Observable } from '../../lib/rx.ts'
import type { Reply, ReplyEnvelope } from '../../lib/transport.ts'
import type { JsonObject, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, RequestId } from '../../lib/jsonrpc/message.ts'
import { CancelledError, CapabilityError, ConnectionClosedError, InternalError, McpError, MethodNotFoundError, TransportError } from '../../lib/jsonrpc/errors.ts'
import { checkMessage, isCheckFailure, isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { isEncodingFailure, unserializable } from '../../lib/jsonrpc/encoding-failure.ts'
import { IncomingRequest } from '../../lib/incoming-request.ts'
import { requestLogic, type RequestActorEvent, type RequestInput } from '../../lib/request-logic.ts'
import type { ContextHost } from '../context.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import type { ServingScope } from './core.ts'
import { classify } from './classify.ts'
import { statelessHandler } from './stateless.ts'
import { startHandler, type OutcomeObserver } from '../../lib/outcome.ts'
import { batchRefusal } from '../../lib/batch-collector.ts'
import { shapeForRevision } from '../../lib/schema/shape.ts'
import { modernHandler } from './modern-methods.ts'
import type { ServerCore } from './core.ts'

/** Serves `envelope`'s request on its reply; answers a request that cannot be served with its error. */
export function serveSessionless(server: ServerCore, envelope: ReplyEnvelope): void {
  const { reply } = envelope
  const inspect = server.options.inspect
  inspect?.({ type: 'rxmcp.frame.in', message: envelope.message })
  // No session negotiated a revision with batches: a batch is refused whole (id null).
  if (Array.isArray(envelope.message)) return answer(server, reply, { jsonrpc: '2.0', id: null, error: batchRefusal(envelope.message, false, 0)!.toJSON() })
  const checked = checkMessage(envelope.message)
  if (isCheckFailure(checked)) return answer(server, reply, { jsonrpc: '2.0', id: checked.id, error: checked.error.toJSON() })
  // Notifications have no one to reach without a session (a cancellation names a request of
  // another exchange); the listener answers them 202. A response answers nothing here.
  if (!('method' in checked) || !('id' in checked)) return
  const message = checked as JsonRpcRequest
  const request = new IncomingRequest(message.id, message.method, message.params)
  request.principal = envelope.principal
  request.requestInfo = envelope.requestInfo
  // Classified once: the era, and a modern request's `_meta` (marked on it).
  const refusal = classify(server, request, undefined)
  const instrumentation = server.instrumentation
  if (instrumentation !== undefined) request.watch = instrumentation.request(request)
  if (refusal !== undefined) return refuse(server, reply, request, refusal)
  const served = new SessionlessRequest(server, reply, request)
  // Looked up once, for this era.
  const handler = request.modernMeta !== undefined ? modernHandler(server, served, message.method) : statelessHandler(server, served, message.method)
  if (handler === undefined) return refuse(server, reply, request, new MethodNotFoundError(`Method not found: ${message.method}`))
  request.onStopped = stopped
  // The served request is the actor's input, so its events come back with it: one function for all.
  const actor = request.actor = server.system.spawn(requestLogic, { input: served, onEvent: PERFORM })
  // The client went away before the answer: the request is cancelled (for the modern era, closing
  // the stream is the cancellation), its handler stopped.
  // (Checked first: the reply also closes after every answer, and an error is not made for nothing.)
  void reply.closed.then(() => { if (!request.isDone) actor.send({ type: 'closed', error: new ConnectionClosedError('The client closed the response stream') }) })
  startHandler(handler, message.params, request, served, SETTLED)
}

/** Where every sessionless request's outcome goes (one object for all): to its actor. */
/** Answers a request refused before its handler ran (its era's gate, an unknown method). */
function refuse(server: ServerCore, reply: Reply, request: IncomingRequest, error: McpError): void {
  request.watch?.event({ type: 'error', error })
  answer(server, reply, { jsonrpc: '2.0', id: request.id, error: error.toJSON() })
}

const SETTLED: OutcomeObserver<unknown, SessionlessRequest> = {
  value: (served, result) => served.incoming.actor!.send({ type: 'result', result }),
  error: (served, error) => served.incoming.actor!.send({ type: 'error', error }),
}

/** A request whose actor was stopped from outside (the server's system stopping) stops its handler. */
const stopped = (request: IncomingRequest) => request.cancel(new CancelledError('Request stopped'))

/** Where every sessionless request actor's events go, with the request they are about. */
const PERFORM = (event: unknown, served: SessionlessRequest): void => perform(served, event as RequestActorEvent)

/** Does what a request's actor decided, on its reply. */
function perform(served: SessionlessRequest, event: RequestActorEvent): void {
  const request = served.incoming
  switch (event.type) {
    case 'result': return succeed(served, event.result)
    case 'error': return fail(served, event.error)
    case 'progress': {
      if (request.isDone || served.reply.isClosed) return
      request.hasSentProgress = true
      request.watch?.event(event)
      try {
        served.notify('notifications/progress', event.params)
      } catch (error) {
        if (!(error instanceof TransportError)) served.server.report(error)
      }
      return
    }
    case 'cancel': return abort(request, event.reason)
    case 'closed': return abort(request, event.error)
  }
}

/** Stops a request's handler unanswered (cancelled, or its client went away). */
function abort(request: IncomingRequest, reason: unknown): void {
  if (!request.isDone) request.watch?.event({ type: 'cancel', reason })
  request.cancel(reason)
}

function succeed(served: SessionlessRequest, last: unknown): void {
  const request = served.incoming
  if (request.isDone) return
  request.isDone = true
  request.watch?.event({ type: 'result', result: last })
  const result = !isJsonObject(last) ? EMPTY_RESULT
    : request.modernMeta !== undefined ? last : shapeForRevision('result', request.method, last, served.protocolVersion)
  respond(served, { jsonrpc: '2.0', id: request.id, result })
}

function fail(served: SessionlessRequest, error: unknown): void {
  const request = served.incoming
  if (request.isDone) return
  request.isDone = true
  if (!(error instanceof McpError)) served.server.options.inspect?.({ type: 'rxmcp.handler.error', method: request.method, error })
  const wire = error instanceof McpError ? error : new InternalError('Internal error')
  request.watch?.event({ type: 'error', error: wire })
  respond(served, { jsonrpc: '2.0', id: request.id, error: wire.toJSON() })
}

const EMPTY_RESULT: JsonObject = Object.freeze({}) as JsonObject

/**
 * The response of a request that reported progress goes out one macrotask later, so that it does
 * not share a read with its last progress notification (see lib/connection.ts, which does the same).
 */
function respond({ server, reply, incoming }: SessionlessRequest, response: JsonRpcResponse): void {
  if (!incoming.hasSentProgress) return answer(server, reply, response)
  asyncScheduler.schedule(() => answer(server, reply, response))
}

/** Writes the response; one that cannot be encoded (a cycle, a BigInt) is answered -32603 instead. */
function answer(server: ServerCore, reply: Reply, response: JsonRpcResponse): void {
  if (reply.isClosed) return
  try {
    write(server, reply, response)
  } catch (error) {
    if (error instanceof TransportError) return
    if (!isEncodingFailure(error)) return server.report(error)
    server.options.inspect?.({ type: 'rxmcp.handler.error', method: 'encode', error })
    try { write(server, reply, unserializable(response.id as RequestId | null)) } catch (again) { server.report(again) }
  }
}

function write(server: ServerCore, reply: Reply, message: JsonRpcMessage): void {
  server.options.inspect?.({ type: 'rxmcp.frame.out', message })
  reply.send(message)
}

/**
 * A sessionless request being served: its scope (no session) and its {@link ContextHost} in one
 * object, the only one made for it beside the request. Its notifications go on its reply. There is
 * no peer to send requests to (the modern era asks through input rounds); its envelope has no
 * `stream` to end while the request goes on (a modern request is not resumed).
 */
class SessionlessRequest implements ContextHost, ServingScope, RequestInput {
  readonly session = undefined
  constructor(readonly server: ServerCore, readonly reply: Reply, readonly incoming: IncomingRequest) {}
  /** The request's method (see RequestInput: its actor's input). */
  get method(): string { return this.incoming.method }
  /** Its actor ended (see RequestInput): a request still unanswered is stopped. */
  unsubscribe(): void { this.incoming.unsubscribe() }
  get host(): ContextHost { return this }
  /** A modern request's own version; a legacy one without a session speaks the newest legacy revision served. */
  get protocolVersion(): string { return this.incoming.protocolVersion ?? this.server.versions.legacy[0] ?? this.server.versions.all[0]! }
  get isClosed(): boolean { return this.reply.isClosed }
  get transportKind(): string | undefined { return this.incoming.requestInfo?.transport }
  notify(method: string, params: JsonObject | undefined): void {
    if (this.incoming.isDone || this.reply.isClosed) return
    write(this.server, this.reply, params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params })
  }
  request<R extends JsonObject>(method: string): Observable<RequestEvent<R>> {
    return throwError(() => new CapabilityError(`Cannot send ${method} to a client in the modern era (MCP 2026-07-28): servers ask through input_required results`))
  }
  report(warning: Error): void { this.server.report(warning) }
}
