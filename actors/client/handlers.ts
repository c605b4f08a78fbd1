import { Observable, defer, from, isObservable, of, type Observable as ObservableType } from '../../lib/rx.ts'
import type { Connection, IncomingRequest, RequestOptions } from '../../lib/connection.ts'
import type { JsonObject, Meta, ProgressToken, RequestId } from '../../lib/jsonrpc/message.ts'
import { CapabilityError, InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import { applyDefaults } from '../../lib/validator.ts'
import { inputRequestProblem } from '../../lib/schema/input-requests.ts'
import type { ClientCapabilities, CreateMessageParams, ElicitParams, Root } from '../../lib/schema/types.ts'
import { bareRequestInfo, type RequestInfo } from '../../lib/transport.ts'
import type { ActorRef } from '../actor.ts'
import { BaseContext, traceContextOf, type ContextHost, type Era, type RequestContext, type TraceContext } from '../context.ts'
import { isPromiseLike, mapOutcome, type HandlerOutcome } from '../request.ts'
import type { ClientMessage, ClientOptions, ClientState } from './api.ts'
import type { InputRequest } from './modern.ts'
import type { UrlElicitations } from './url-elicitations.ts'

/**
 * Answers one request the server asks of the client (sampling, elicitation, roots), whichever way
 * it came: a live server-to-client request (legacy era) or an input request inside an
 * `input_required` result (modern era). Same handlers, same answers.
 */
export type InputHandler = (params: JsonObject | undefined, ctx: RequestContext) => HandlerOutcome<JsonObject>

/**
 * The handlers of what the server may ask, by method, each present only when the client declared
 * it: `sampling/createMessage`, `elicitation/create` (by mode; form answers completed with the
 * schema's defaults) and `roots/list` (the roots held in the client's state). A request that
 * breaks MCP's rules for its params (a sampling message without a role or content, tool results
 * mixed with other content or not answering each tool use, a URL elicitation without a valid url
 * or an elicitationId) is answered -32602 and never reaches the application's handler. The id of
 * each URL elicitation taken is noted in `urlElicitations`, whose completion the client then hears.
 */
export function inputHandlers(options: ClientOptions, capabilities: ClientCapabilities, roots: () => Root[], urlElicitations?: UrlElicitations): Map<string, InputHandler> {
  const handlers = new Map<string, InputHandler>()
  const { sampling, elicitation } = options
  if (sampling !== undefined) {
    handlers.set('sampling/createMessage', (params, ctx) => {
      // MCP 2025-11-25 schema (CreateMessageRequestParams.tools): the client MUST return an error
      // when tools or toolChoice come without its sampling.tools capability.
      if ((params?.tools !== undefined || params?.toolChoice !== undefined) && capabilities.sampling?.tools === undefined) {
        throw new InvalidParamsError('Invalid params: this client did not declare sampling.tools')
      }
      // MCP sampling: roles, content, tool results alone in their message, each tool use answered.
      const problem = inputRequestProblem('sampling/createMessage', params)
      if (problem !== undefined) throw new InvalidParamsError(`Invalid params: ${problem}`)
      return mapOutcome(() => sampling(params as unknown as CreateMessageParams, ctx), toObject, rethrow)
    })
  }
  if (elicitation?.form !== undefined || elicitation?.url !== undefined) {
    handlers.set('elicitation/create', (params, ctx) => {
      const mode = params?.mode === 'url' ? 'url' : 'form'
      const handler = elicitation[mode]
      if (handler === undefined) throw new InvalidParamsError(`Invalid params: this client does not support ${mode} elicitation`)
      const problem = inputRequestProblem('elicitation/create', params)
      if (problem !== undefined) throw new InvalidParamsError(`Invalid params: ${problem}`)
      if (mode === 'url') urlElicitations?.saw(params!.elicitationId as string)
      const schema = mode === 'form' && isJsonObject(params?.requestedSchema) ? params!.requestedSchema : undefined
      return mapOutcome(() => handler(params as unknown as ElicitParams, ctx), result =>
        // Fields the user left out take the schema's defaults, so the server sees complete forms.
        schema !== undefined && result.action === 'accept' ? { ...result, content: applyDefaults(schema, result.content as Record<string, unknown> | undefined) } as JsonObject : toObject(result), rethrow)
    })
  }
  if (capabilities.roots !== undefined) handlers.set('roots/list', () => ({ roots: roots() }))
  return handlers
}

/**
 * Registers the input handlers on one connection, for the live requests a legacy server sends.
 * Called for every connection a client opens (each reconnect).
 */
export function registerClientHandlers(connection: Connection, handlers: ReadonlyMap<string, InputHandler>, actor: ActorRef<ClientState, ClientMessage>, report?: (warning: Error) => void): void {
  // Contexts answer on the connection their request came in on, even while a newer one starts.
  const host: ContextHost = { connection, get protocolVersion() { return actor.state.protocolVersion }, report }
  for (const [method, handler] of handlers) {
    connection.setRequestHandler(method, (params, request: IncomingRequest) => handler(params, new BaseContext(host, request)))
  }
}

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

/** The capabilities a client declares: those given, plus those its handlers imply. */
export function declaredCapabilities(options: ClientOptions): ClientCapabilities {
  const capabilities: ClientCapabilities = { ...options.capabilities }
  if (options.sampling !== undefined) capabilities.sampling = { ...capabilities.sampling, ...(options.samplingTools ? { tools: {} } : undefined) }
  if (options.elicitation?.form !== undefined || options.elicitation?.url !== undefined) {
    capabilities.elicitation = {
      ...capabilities.elicitation,
      ...(options.elicitation.form !== undefined ? { form: {} } : undefined),
      ...(options.elicitation.url !== undefined ? { url: {} } : undefined),
    }
  }
  if (options.roots !== undefined) capabilities.roots = { listChanged: true, ...capabilities.roots }
  return capabilities
}

function toObject<T>(value: T): JsonObject {
  return value as unknown as JsonObject
}

function rethrow(error: unknown): never {
  throw error
}

/** The request info of a modern input request: no transport request of its own carried it. */
const NO_REQUEST_INFO = bareRequestInfo(undefined)
