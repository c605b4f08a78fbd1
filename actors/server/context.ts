import { throwError, type Observable } from '../../lib/rx.ts'
import type { IncomingRequest, RequestOptions } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { CapabilityError } from '../../lib/jsonrpc/errors.ts'
import type { ModernMeta } from '../../lib/schema/modern.ts'
import {
  LOGGING_LEVELS,
  type ClientCapabilities, type CreateMessageParams, type CreateMessageResult, type ElicitParams, type ElicitResult,
  type Implementation, type ListRootsResult, type LoggingLevel,
} from '../../lib/schema/types.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import type { InputOptions, ServerContext, TaskHandle } from './api.ts'
import type { HandlerOutcome } from '../request.ts'
import { BaseContext } from '../context.ts'
import type { ServingScope, SessionCore } from './core.ts'
import type { Round } from './round.ts'
import { checkElicitResult } from './elicitation.ts'

/**
 * The context of a legacy-era request: filled from its session (negotiated capabilities, client
 * info, `logging/setLevel`); asking the client is a live server-to-client request.
 */
export class SessionContext extends BaseContext implements ServerContext {
  constructor(readonly session: SessionCore, incoming: IncomingRequest) {
    super(session.scope.host, incoming)
  }
  get clientCapabilities(): ClientCapabilities { return this.session.state.clientCapabilities }
  get clientInfo(): Implementation | undefined { return this.session.state.clientInfo }
  get logLevel(): LoggingLevel { return this.session.state.logLevel }
  /** Legacy requests carry nothing across rounds: there are none. */
  get requestState(): unknown { return undefined }
  /** Not a task: a task's handler gets a TaskContext. */
  get task(): TaskHandle | undefined { return undefined }
  runAsTask<R extends JsonObject>(work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R> {
    return this.session.server.tasks.runAsTask(this, this.incoming.params, work)
  }
  setRequestState(_value: unknown): void {}
  log(level: LoggingLevel, data: unknown, logger?: string): void { this.session.log(level, data, logger, this.requestId) }
  sample(params: CreateMessageParams, options?: InputOptions): Promise<CreateMessageResult> {
    return this.session.sample(params, { signal: this.signal, relatedRequestId: this.requestId, ...options })
  }
  /** The client's answer, checked: rejects with ElicitationContentError when it is not one to `params` (see checkElicitResult). */
  elicit(params: ElicitParams, options?: InputOptions): Promise<ElicitResult> {
    return this.session.elicit(params, { signal: this.signal, relatedRequestId: this.requestId, ...options }).then(answer => checkElicitResult(params, answer, this.session.server.jsonSchema))
  }
  listRoots(options?: InputOptions): Promise<ListRootsResult> {
    return this.session.listRoots({ signal: this.signal, relatedRequestId: this.requestId, ...options })
  }
}

/**
 * The context of a modern-era request (MCP 2026-07-28): filled from the request's `_meta`; asking
 * the client is an MRTR round. `elicit`, `sample` and `listRoots` resolve with the answer the
 * client sent for their key when it re-issued the request with the round's `requestState` (an
 * elicitation's checked against its requestedSchema); without one, the request is answered
 * `input_required` (with every input asked in the same turn) and the handler's promise never
 * settles: the handler runs again from the start on the retry.
 */
export class ModernContext extends BaseContext implements ServerContext {
  override readonly era = 'modern' as const

  constructor(readonly scope: ServingScope, incoming: IncomingRequest, readonly modernMeta: ModernMeta, readonly round: Round) {
    super(scope.host, incoming)
  }
  get session(): SessionCore | undefined { return this.scope.session }
  override get protocolVersion(): string { return this.modernMeta.protocolVersion }
  get clientCapabilities(): ClientCapabilities { return this.modernMeta.clientCapabilities as ClientCapabilities }
  get clientInfo(): Implementation | undefined { return this.modernMeta.clientInfo as Implementation | undefined }
  /** The request's `_meta` level; without one the request gets no log messages at all (MCP 2026-07-28 logging). */
  get logLevel(): LoggingLevel {
    const level = this.modernMeta.logLevel
    return level !== undefined && (LOGGING_LEVELS as readonly string[]).includes(level) ? level as LoggingLevel : 'emergency'
  }
  /** Aborted when the request is cancelled or the connection closes, and when this run ends input_required (see Round.end). */
  override get signal(): AbortSignal { return this.round.signalOf(this.incoming.signal) }
  get requestState(): unknown { return this.round.data }
  /** Not a task: a task's handler gets a TaskContext. */
  get task(): TaskHandle | undefined { return undefined }
  runAsTask<R extends JsonObject>(work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R> {
    return this.scope.server.tasks.runAsTask(this, this.incoming.params, work)
  }
  setRequestState(value: unknown): void { this.round.data = value }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    const wanted = this.modernMeta.logLevel
    if (wanted === undefined || !(LOGGING_LEVELS as readonly string[]).includes(wanted)) return
    if (LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(wanted as LoggingLevel)) return
    this.notify('notifications/message', logger === undefined ? { level, data } : { level, logger, data })
  }
  sample(params: CreateMessageParams, options?: InputOptions): Promise<CreateMessageResult> {
    return this.round.ask('sampling/createMessage', params as unknown as JsonObject, this.clientCapabilities, options?.key) as Promise<CreateMessageResult>
  }
  elicit(params: ElicitParams, options?: InputOptions): Promise<ElicitResult> {
    return this.round.ask('elicitation/create', params as unknown as JsonObject, this.clientCapabilities, options?.key, this.scope.server.jsonSchema) as Promise<ElicitResult>
  }
  listRoots(options?: InputOptions): Promise<ListRootsResult> {
    return this.round.ask('roots/list', {}, this.clientCapabilities, options?.key) as Promise<ListRootsResult>
  }
  /** The modern era has no server-to-client requests: ask through elicit, sample or listRoots. */
  override request<R extends JsonObject = JsonObject>(method: string, _params?: JsonObject, _options?: RequestOptions): Observable<RequestEvent<R>> {
    return throwError(() => new CapabilityError(`Cannot send ${method} to a client in the modern era (MCP 2026-07-28): servers ask through input_required results (ctx.elicit, ctx.sample, ctx.listRoots)`))
  }
}
