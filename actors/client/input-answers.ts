import { Observable, defer, from, isObservable, of, type Observable as ObservableType } from '../../lib/rx.ts'
import type { InputAnswerer, RequestOptions } from '../../lib/connection.ts'
import type { JsonObject, Meta, ProgressToken, RequestId } from '../../lib/jsonrpc/message.ts'
import { CapabilityError } from '../../lib/jsonrpc/errors.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import type { ClientCapabilities } from '../../lib/schema/types.ts'
import { traceContextOf, type Era, type RequestContext, type TraceContext } from '../context.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { isPromiseLike, type HandlerOutcome } from '../request.ts'
import { bareRequestInfo, type RequestInfo } from '../../lib/transport.ts'
import type { InputRequest } from './modern.ts'

/**
 * Answers one request the server asks of the client (sampling, elicitation, roots), whichever way
 * it came: a live server-to-client request (legacy era) or an input request inside an
 * `input_required` result (modern era). Same handlers, same answers.
 */
export type InputHandler = (params: JsonObject | undefined, ctx: RequestContext) => HandlerOutcome<JsonObject>

/** What {@link answerInputRequest} needs from the client. */
export interface InputAnswerHost {
  readonly handlers: ReadonlyMap<string, InputHandler>
  readonly capabilities: ClientCapabilities
  readonly protocolVersion: string
  /** A request to the server made from inside a handler (through the client, with modern `_meta`). */
  request<R extends JsonObject>(method: string, params: JsonObject | undefined, options: RequestOptions): ObservableType<RequestEvent<R>>
}

/**
 * Answers one input request of an `input_required` result with the client's handler: a cold
 * Observable of the one answer. Errors with `CapabilityError` when the server asked for something
 * the client did not declare (MCP MRTR: the server MUST NOT; the client cannot build the input, so
 * it does not retry). Unsubscribing aborts the handler's `ctx.signal` and unsubscribes an
 * Observable handler.
 */
export function answerInputRequest(host: InputAnswerHost, key: string, request: InputRequest): ObservableType<JsonObject> {
  return new Observable<JsonObject>(subscriber => {
    const handler = host.handlers.get(request.method)
    const missing = handler === undefined ? request.method : missingCapability(request, host.capabilities)
    if (missing !== undefined) {
      subscriber.error(new CapabilityError(`The server asked for ${missing} (input request ${JSON.stringify(key)}), which this client did not declare`))
      return
    }
    const controller = new AbortController()
    const ctx = new InputRequestContext(host, key, request, controller.signal)
    const subscription = defer(() => toObservable(handler!(request.params, ctx))).subscribe(subscriber)
    return () => {
      subscription.unsubscribe()
      controller.abort()
    }
  })
}

/**
 * Answers one input request through the request's own `answerInput` (RequestOptions) instead of
 * the client's handlers: a cold Observable of its one answer; unsubscribing aborts its signal.
 */
export function answerThrough(answerInput: InputAnswerer, request: InputRequest): ObservableType<JsonObject> {
  return new Observable<JsonObject>(subscriber => {
    const controller = new AbortController()
    let isOver = false
    answerInput(request.method, request.params, controller.signal).then(
      result => { isOver = true; subscriber.next(result); subscriber.complete() },
      error => { isOver = true; subscriber.error(error) },
    )
    return () => { if (!isOver) controller.abort() }
  })
}

/** The declared capability an input request needs and the client lacks (a mode or a sub-capability), if any. */
function missingCapability(request: InputRequest, capabilities: ClientCapabilities): string | undefined {
  if (request.method === 'elicitation/create') {
    const mode = request.params?.mode === 'url' ? 'url' : 'form'
    const elicitation = capabilities.elicitation as { form?: unknown; url?: unknown } | undefined
    return elicitation?.[mode] === undefined ? `${mode} elicitation` : undefined
  }
  if (request.method === 'sampling/createMessage' && Array.isArray(request.params?.tools)) {
    return (capabilities.sampling as { tools?: unknown } | undefined)?.tools === undefined ? 'sampling with tools' : undefined
  }
  return undefined
}

function toObservable(outcome: HandlerOutcome<JsonObject>): ObservableType<JsonObject> {
  if (isObservable(outcome)) return outcome
  if (isPromiseLike(outcome)) return from(outcome as PromiseLike<JsonObject>)
  return of(outcome)
}

/**
 * The context of a handler answering an input request: there is no request on the wire to tie
 * messages to, so progress and notifications go nowhere; `requestId` is the input request's key.
 */
class InputRequestContext implements RequestContext {
  readonly era: Era = 'modern'
  readonly progressToken: ProgressToken | undefined = undefined
  readonly meta: Meta | undefined
  readonly trace: TraceContext | undefined
  /** A server's input request is not authenticated on the client's side. */
  readonly principal = undefined
  /** An input request came in an answer of the server's, not on a request of its own. */
  readonly requestInfo: RequestInfo = NO_REQUEST_INFO

  constructor(private readonly host: InputAnswerHost, readonly requestId: RequestId, private readonly input: InputRequest, readonly signal: AbortSignal) {
    this.meta = isJsonObject(input.params?._meta) ? input.params!._meta as Meta : undefined
    this.trace = traceContextOf(this.meta)
  }

  get protocolVersion(): string { return this.host.protocolVersion }
  get method(): string { return this.input.method }
  progress(): void {}
  notify(): void {}
  closeStream(): void {}

  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): ObservableType<RequestEvent<R>> {
    return this.host.request<R>(method, params, { signal: this.signal, ...options })
  }
}

/** The request info of a modern input request: no transport request of its own carried it. */
const NO_REQUEST_INFO = bareRequestInfo(undefined)
