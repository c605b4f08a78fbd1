/**
 * Legacy-era requests without a session (a `stateless` Streamable HTTP listener: each POST stands
 * alone, initialize or not). The methods a session answers itself are answered from nothing kept:
 * initialize tells what a session would be offered, `logging/setLevel` and resource subscriptions
 * are checked and acknowledged (there is no session to hold them). The router's methods run with a
 * {@link StatelessContext}.
 */
import { throwError, type Observable } from '../../lib/rx.ts'
import type { IncomingRequest, RequestOptions } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { CapabilityError, InvalidParamsError, ResourceNotFoundError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { negotiateVersion } from '../../lib/schema/negotiate.ts'
import {
  LOGGING_LEVELS,
  type ClientCapabilities, type CreateMessageResult, type ElicitResult, type Implementation, type ListRootsResult, type LoggingLevel,
} from '../../lib/schema/types.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import { BaseContext } from '../context.ts'
import type { HandlerOutcome } from '../request.ts'
import type { ServerContext, TaskHandle } from './api.ts'
import type { ServerCore, ServingScope } from './core.ts'
import { SERVER_DEFAULTS } from './options.ts'

/** A legacy handler without a session: the outcome of one request. */
export type StatelessHandler = (params: JsonObject | undefined, request: IncomingRequest) => unknown

/** What initialize negotiates, and its answer: the same for a session and a stateless exchange. */
export function initializeAnswer(server: ServerCore, params: JsonObject | undefined): {
  protocolVersion: string; clientCapabilities: ClientCapabilities; clientInfo: Implementation | undefined; result: JsonObject
} {
  const protocolVersion = negotiateVersion(params?.protocolVersion, server.versions.legacy)
  const clientCapabilities = isJsonObject(params?.capabilities) ? params!.capabilities as ClientCapabilities : {}
  const clientInfo = isJsonObject(params?.clientInfo) ? params!.clientInfo as unknown as Implementation : undefined
  const result: JsonObject = { protocolVersion, capabilities: server.capabilities() as JsonObject, serverInfo: server.info as unknown as JsonObject }
  if (server.options.instructions !== undefined) result.instructions = server.options.instructions
  return { protocolVersion, clientCapabilities, clientInfo, result }
}

/** The level a `logging/setLevel` asks for; -32602 for one MCP does not have. */
export function requireLevel(params: JsonObject | undefined): LoggingLevel {
  const level = params?.level
  if (typeof level !== 'string' || !LOGGING_LEVELS.includes(level as LoggingLevel)) throw new InvalidParamsError(`Invalid params: unknown logging level ${JSON.stringify(level)}`)
  return level as LoggingLevel
}

export function requireUri(params: JsonObject | undefined): string {
  const uri = params?.uri
  if (typeof uri !== 'string') throw new InvalidParamsError('Invalid params: uri must be a string')
  return uri
}

/** The handler of a legacy request without a session, looked up once; undefined for a method nobody answers. */
export function statelessHandler(server: ServerCore, scope: ServingScope, method: string): StatelessHandler | undefined {
  switch (method) {
    // The handshake is not the middleware's business (as on a session).
    case 'initialize': return params => initializeAnswer(server, params).result
    case 'ping': return () => ({})
    case 'logging/setLevel': return guarded(scope, method, params => { requireLevel(params); return {} })
    case 'resources/subscribe':
      return guarded(scope, method, params => {
        const uri = requireUri(params)
        if (!server.router.resourceExists(uri)) throw new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
        return {}
      })
    case 'resources/unsubscribe': return guarded(scope, method, params => { requireUri(params); return {} })
  }
  const route = server.router.routes.get(method) ?? server.methods.get(method)
  if (route === undefined) return undefined
  const wrapped = server.wrap(method, route)
  return (params, request) => wrapped(params, new StatelessContext(scope, request))
}

function guarded(scope: ServingScope, method: string, handler: (params: JsonObject | undefined) => JsonObject): StatelessHandler {
  return (params, request) => scope.server.throughMiddleware(method, params, () => new StatelessContext(scope, request), () => handler(params))
}

/**
 * The context of a legacy request without a session: nothing was negotiated, so the client
 * declared no capabilities, log messages go nowhere (none may go before initialize), and nothing
 * can be asked of the client (its answer would come on another exchange, to no one).
 */
export class StatelessContext extends BaseContext implements ServerContext {
  constructor(readonly scope: ServingScope, incoming: IncomingRequest) {
    super(scope.host, incoming)
  }
  get session(): undefined { return undefined }
  get clientCapabilities(): ClientCapabilities { return {} }
  get clientInfo(): Implementation | undefined { return undefined }
  get logLevel(): LoggingLevel { return this.scope.server.options.defaultLogLevel ?? SERVER_DEFAULTS.defaultLogLevel }
  get requestState(): unknown { return undefined }
  get task(): TaskHandle | undefined { return undefined }
  runAsTask<R extends JsonObject>(work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R> {
    return this.scope.server.tasks.runAsTask(this, this.incoming.params, work)
  }
  setRequestState(_value: unknown): void {}
  log(_level: LoggingLevel, _data: unknown, _logger?: string): void {}
  sample(): Promise<CreateMessageResult> { return Promise.reject(refused('sampling/createMessage')) }
  elicit(): Promise<ElicitResult> { return Promise.reject(refused('elicitation/create')) }
  listRoots(): Promise<ListRootsResult> { return Promise.reject(refused('roots/list')) }
  override request<R extends JsonObject = JsonObject>(method: string, _params?: JsonObject, _options?: RequestOptions): Observable<RequestEvent<R>> {
    return throwError(() => refused(method))
  }
}

function refused(method: string): CapabilityError {
  return new CapabilityError(`Cannot send ${method} to a client without a session (stateless HTTP): nothing was negotiated, and its answer could not come back`)
}
