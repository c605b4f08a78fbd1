import { Observable, distinctUntilChanged, lastValueFrom, map } from '../../lib/rx.ts'
import { SessionWatches } from './session-watches.ts'
import type { ConnectionObserver } from '../../lib/request-observer.ts'
import { createConnection, type Connection, type ConnectionOptions, type IncomingRequest, type RequestHandler, type RequestOptions } from '../../lib/connection.ts'
import type { Principal } from '../../lib/auth.ts'
import type { SharedSession, Transport } from '../../lib/transport.ts'
import type { JsonObject, JsonRpcNotification, RequestId } from '../../lib/jsonrpc/message.ts'
import { CapabilityError, InvalidParamsError, InvalidRequestError, McpError, ResourceNotFoundError, TransportError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { randomId } from '../../lib/base64url.ts'
import { canSendRequest, type LifecycleState } from '../../lib/lifecycle.ts'
import { Feature } from '../../lib/schema/negotiate.ts'
import { hasCapability, requiredCapability } from '../../lib/schema/capabilities.ts'
import { inputRequestProblem, rootsProblem } from '../../lib/schema/input-requests.ts'
import { resultOf, type RequestEvent } from '../../lib/operators/progress.ts'
import { shapeForRevision, type ShapeKind } from '../../lib/schema/shape.ts'
import {
  LOGGING_LEVELS,
  type ClientCapabilities, type CreateMessageParams, type CreateMessageResult, type ElicitParams, type ElicitResult,
  type Implementation, type ListRootsResult, type LoggingLevel, type ServerCapabilities,
} from '../../lib/schema/types.ts'
import type { ActorRef, ActorSystem } from '../../lib/actor/system.ts'
import type { Snapshot } from '../../lib/actor/logic.ts'
import type { InputOptions, SessionState } from './api.ts'
import { sessionLogic, type SavedSession, type SessionEvent, type SessionInput, type SessionMessage } from './session-logic.ts'
import { SERVER_DEFAULTS } from './options.ts'
import { SessionContext } from './context.ts'
import { connectionHost } from '../context.ts'
import { classify, type LegacyGate } from './classify.ts'
import { modernHandler } from './modern-methods.ts'
import { serveModern } from './modern.ts'
import { initializeAnswer, requireLevel, requireUri } from './stateless.ts'
import type { RouteHandler } from './api.ts'
import type { ListKind } from './registry.ts'
import type { ServerCore, ServingScope, SessionCore } from './core.ts'
import { taskToWire, withRelatedTask, type TaskState } from '../tasks/task.ts'

/**
 * Where a session's requests are spawned: the server's system, under the session's actor (made on
 * first need). A class, not an object literal with a getter: a literal's getter is a closure of its
 * own per session, so with many sessions (Streamable HTTP) the connection's read of `parent` met a
 * different accessor each time; the prototype's getter is one for all.
 */
class SessionRequests {
  constructor(readonly system: ActorSystem, readonly session: Session) {}
  get parent(): ActorRef<never> { return this.session.actor as ActorRef<never> }
}

let sessionCount = 0
/**
 * Tells this process's session ids from another's: drawn with the first session, not when the
 * module loads, since Cloudflare Workers refuse random numbers in a module's global scope.
 */
let processTag: string | undefined

/** The methods a session answers itself, beside the router's: no `server.method` may take them. */
export const SESSION_METHODS: ReadonlySet<string> = new Set([
  'initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'server/discover', 'subscriptions/listen',
])

/**
 * One transport's connection to the server: a legacy session (initialize, then requests of the
 * negotiated version), and the place modern-era requests arriving on the same transport (stdio,
 * WebSocket) are served, each with its own `_meta`. A modern request that comes with its own reply
 * stream (a Streamable HTTP POST) gets no Session: see serveSessionless.
 */
export class Session implements SessionCore, LegacyGate {
  /**
   * The session's side of its connection (ConnectionOptions): one object whose hooks are its
   * class's methods, shared by every session, where an object literal of arrows would be a closure
   * per hook per session (with many sessions, Streamable HTTP, that was most of an idle session's
   * heap). Inside Session, so it reaches the session's private state.
   */
  static readonly #Hooks = class SessionHooks implements ConnectionOptions {
    /** Each request is an actor, a child of this session's. */
    readonly actors: SessionRequests
    constructor(readonly session: Session) { this.actors = new SessionRequests(session.server.system, session) }
    get maxBatchSize(): number | undefined { return this.session.server.options.maxBatchSize }
    get timeout(): number | undefined { return this.session.server.options.timeout }
    get captureStack(): boolean | undefined { return this.session.server.options.captureStack }
    get inspect(): ConnectionOptions['inspect'] { return this.session.server.options.inspect }
    get observer(): ConnectionObserver | undefined { return this.session.#observer }
    gateRequest(request: IncomingRequest): McpError | undefined {
      // Who the session serves, for list_changed per principal (its latest request's, a refreshed token's included).
      if (request.principal !== undefined) this.session.#principal = request.principal
      return classify(this.session.server, request, this.session)
    }
    sharedSession(shared: SharedSession): void { if (this.session.#shared === undefined) this.session.#adopt(shared) }
    gateOutgoing(method: string, params: JsonObject | undefined): Error | undefined { return this.session.#gateOutgoing(method, params) }
    findHandler(method: string): RequestHandler | undefined { return this.session.#handlerFor(method) }
    onNotification(notification: JsonRpcNotification): void {
      if (notification.method === 'notifications/initialized') this.session.actor.send({ type: 'initialized' })
    }
    allowBatch(): boolean {
      const state = this.session.#state
      return Feature.batch(state.protocolVersion) && state.status !== 'awaiting-initialize'
    }
    /**
     * What goes out fits the negotiated revision (initialize is answered after the version is set);
     * the result of a modern request, the revision it spoke.
     */
    shapeOutgoing(kind: ShapeKind, method: string, payload: JsonObject, request?: IncomingRequest): JsonObject {
      return shapeForRevision(kind, method, payload, request?.protocolVersion ?? this.session.#state.protocolVersion)
    }
    /**
     * The negotiated version goes with every message from the initialize answer on (HTTP checks
     * MCP-Protocol-Version by it); before, the state holds only a default, which is no version.
     */
    protocolVersion(): string | undefined {
      const state = this.session.#state
      return state.status === 'awaiting-initialize' ? undefined : state.protocolVersion
    }
    reportUnhandledError(error: unknown): void { this.session.server.report(error) }
  }

  /** Keeps the session's copy of its actor's state (an observer object, not a closure per session). */
  static readonly #Mirror = class StateMirror {
    constructor(readonly session: Session) {}
    next(snapshot: Snapshot<SessionState>): void { this.session.#state = snapshot.state }
  }

  /** Unique across processes; a shared session's is the listener's, adopted with its first message. */
  #id: string
  /** The record of a session kept beyond this process, once its first message brought it. */
  #shared: SharedSession | undefined
  readonly server: ServerCore
  readonly connection: Connection
  /**
   * The session's actor (sessionLogic), a root of `server.system` spawned when first needed (after
   * a shared session's first message named it): the parent of its requests and subscriptions.
   */
  #actor: ActorRef<SessionMessage, SessionState> | undefined
  /** The actor's state as its last snapshot told it (its initial state before it is spawned). */
  #state: SessionState
  readonly closed: Promise<void>
  /** The principal of the session's latest authenticated request (undefined while none was). */
  #principal: Principal | undefined
  /** What this session was offered at initialize; fixed for its life, as MCP negotiates it once. */
  #capabilities: ServerCapabilities = {}
  /** Where this session's requests are served (see scope): made with the first request that needs it. */
  #scope: ServingScope | undefined
  /** What watches this session's requests (telemetry), when the server has any. */
  readonly #observer: ConnectionObserver | undefined

  constructor(server: ServerCore, transport: Transport) {
    // Unique across processes: a task store shared between instances owns tasks by it. A session
    // shared between instances is named the same on each instead (see #adopt).
    this.#id = `session-${processTag ??= randomId(6)}-${++sessionCount}`
    this.server = server
    const options = server.options
    this.#state = sessionLogic.initial(this.#input())
    this.#observer = server.instrumentation?.connection('server', transport, () => this.#negotiatedVersion())
    // One object of prototype methods per session, not a closure per hook (see SessionHooks).
    this.connection = createConnection(transport, new Session.#Hooks(this))
    this.closed = this.connection.closed.then(() => {
      // The session's own tasks end with it (see ServerTasks.sessionEnded).
      void server.tasks.sessionEnded(this).catch(error => server.report(error))
      // Its subscriptions end with it (uncounted, or its own watches ended; a handed-over session's go on elsewhere).
      for (const uri of this.#state.subscriptions) this.#watches.unwatch(uri)
      // The actor stops itself, and so its subscriptions and any request still running.
      this.#actor?.send({ type: 'closed' })
    })
  }

  get id(): string { return this.#id }

  /** The version negotiated at initialize, undefined before. */
  #negotiatedVersion(): string | undefined {
    return this.#state.status === 'awaiting-initialize' ? undefined : this.#state.protocolVersion
  }
  /** Where this session's requests are served: its server, its connection, itself. */
  get scope(): ServingScope {
    const server = this.server
    return this.#scope ??= { server, host: connectionHost(this.connection, () => this.protocolVersion, warning => server.report(warning)), session: this }
  }
  get isHandedOver(): boolean { return this.#shared?.isHandedOver === true }

  /**
   * The first message of a session kept beyond this process brings its record: the session takes
   * its id (the same on every instance, so its tasks are found by it) and goes on from what was saved.
   */
  #adopt(shared: SharedSession): void {
    this.#shared = shared
    this.#id = shared.id
    this.#share(shared)
  }

  /** The session's actor (see #actor): others send it messages and watch its snapshots. */
  get actor(): ActorRef<SessionMessage, SessionState> {
    return this.#actor ??= this.#spawn()
  }

  #spawn(): ActorRef<SessionMessage, SessionState> {
    // Its input names its session, so one function does every session's events (see performEvent).
    const input: SpawnInput = { ...this.#input(), session: this }
    const actor = this.server.system.spawn(sessionLogic, { id: this.#id, input, onEvent: performEvent })
    actor.snapshots.subscribe(new Session.#Mirror(this))
    return actor
  }

  #input(): SessionInput {
    const server = this.server
    return {
      protocolVersion: server.versions.legacy[0] ?? server.versions.all[0]!,
      logLevel: server.options.defaultLogLevel ?? SERVER_DEFAULTS.defaultLogLevel,
    }
  }

  /**
   * A session kept beyond this process: it starts from what another instance saved (the client
   * initialized there), and every change of its negotiated state is saved for the next one.
   */
  #share(shared: SharedSession): void {
    const restored = shared.restored === undefined ? undefined : restoreState(shared.restored, this)
    if (restored !== undefined) {
      this.actor.send({ type: 'restore', saved: restored })
      // What was offered at initialize is not saved: the server offers what it offers now.
      this.#capabilities = this.server.capabilities()
    }
    let saved = shared.restored ?? ''
    this.actor.snapshots.subscribe(({ state }) => {
      if (state.status === 'awaiting-initialize' || state.status === 'closed') return
      const text = JSON.stringify(saveState(state))
      if (text === saved) return
      saved = text
      shared.save(text)
    })
  }

  get state(): SessionState { return this.#state }
  get states(): Observable<SessionState> {
    return this.actor.snapshots.pipe(map(snapshot => snapshot.state), distinctUntilChanged())
  }
  get protocolVersion(): string { return this.#state.protocolVersion }
  /** The principal of the session's latest authenticated request. */
  get principal(): Principal | undefined { return this.#principal }
  /** A warning about a handler's use of its context (see ContextHost.report): the server reports it. */
  report(warning: Error): void { this.server.report(warning) }

  #gate(request: IncomingRequest): McpError | undefined {
    return classify(this.server, request, this)
  }

  /** Where the session's lifecycle is (see LegacyGate). */
  get status(): LifecycleState { return this.#state.status }
  /** What the session was offered at initialize (see LegacyGate). */
  get offered(): ServerCapabilities { return this.#capabilities }

  #gateOutgoing(method: string, params: JsonObject | undefined): Error | undefined {
    const state = this.#state
    if (!canSendRequest('server', state.status, method)) {
      return new CapabilityError(`Cannot send ${method} before the client has finished initializing`)
    }
    const needed = requiredCapability(method, params)
    if (needed !== undefined && !hasCapability(state.clientCapabilities, needed)) {
      return new CapabilityError(`The client did not declare the ${needed.join('.')} capability, which ${method} needs`)
    }
    // MCP sampling and elicitation: a malformed request (the handler's mistake) never reaches the wire.
    const problem = inputRequestProblem(method, params)
    if (problem !== undefined) return new TypeError(`Cannot send ${method}: ${problem}`)
    return undefined
  }

  request<R extends JsonObject = JsonObject>(method: string, params?: object, options?: RequestOptions): Observable<RequestEvent<R>> {
    return this.connection.request<R>(method, params as JsonObject | undefined, { progress: false, ...options })
  }

  notify(method: string, params?: object, relatedRequestId?: RequestId): void {
    if (this.connection.isClosed) return
    try {
      const written = this.connection.notify(method, params as JsonObject | undefined, relatedRequestId)
      written?.catch(error => this.#reportSend(error))
    } catch (error) { this.#reportSend(error) }
  }

  /** A notification that cannot be written because the transport just went is not worth a report. */
  #reportSend(error: unknown): void {
    if (!(error instanceof TransportError)) this.server.report(error)
  }

  notifications<P extends JsonObject = JsonObject>(method: string): Observable<P> {
    return this.connection.notifications<P>(method)
  }

  log(level: LoggingLevel, data: unknown, logger?: string, relatedRequestId?: RequestId): void {
    const state = this.#state
    // MCP logging: send only at or above the level the client set; never before initialize.
    if (state.status !== 'operating' && state.status !== 'initializing') return
    if (LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(state.logLevel)) return
    this.notify('notifications/message', logger === undefined ? { level, data } : { level, logger, data }, relatedRequestId)
  }

  sample(params: CreateMessageParams, options?: InputOptions): Promise<CreateMessageResult> {
    if (options?.task !== undefined) return this.#askAsTask('sampling/createMessage', ['sampling', 'createMessage'], params as unknown as JsonObject, options) as Promise<CreateMessageResult>
    return lastValueFrom(this.request<CreateMessageResult & JsonObject>('sampling/createMessage', params as unknown as JsonObject, options).pipe(resultOf()))
  }

  elicit(params: ElicitParams, options?: InputOptions): Promise<ElicitResult> {
    if (options?.task !== undefined) return this.#askAsTask('elicitation/create', ['elicitation', 'create'], params as unknown as JsonObject, options) as Promise<ElicitResult>
    return lastValueFrom(this.request<ElicitResult & JsonObject>('elicitation/create', params as unknown as JsonObject, options).pipe(resultOf()))
  }

  /**
   * Asks the client to run a request as a task (MCP 2025-11-25, the client's side of tasks): sent
   * with `params.task`, answered with a CreateTaskResult at once, then waited for with
   * `tasks/result` (which blocks until the client's task ends). The client must have declared
   * `tasks.requests.<kind>.<method>`.
   */
  async #askAsTask(method: string, path: [string, string], params: JsonObject, options: InputOptions): Promise<JsonObject> {
    const declared = (this.#state.clientCapabilities.tasks as { requests?: Record<string, Record<string, unknown>> } | undefined)?.requests?.[path[0]]?.[path[1]]
    if (!isJsonObject(declared)) throw new CapabilityError(`The client did not declare tasks.requests.${path.join('.')}, which ${method} as a task needs`)
    const task: JsonObject = options.task!.ttlMs === undefined ? {} : { ttl: options.task!.ttlMs }
    const { task: _task, ...requestOptions } = options
    const created = await lastValueFrom(this.request<JsonObject>(method, { ...params, task }, requestOptions).pipe(resultOf()))
    const taskId = isJsonObject(created.task) ? created.task.taskId : undefined
    // A client may answer at once instead (it need not run every request as a task).
    if (typeof taskId !== 'string') return created
    return lastValueFrom(this.request<JsonObject>('tasks/result', { taskId }, { ...requestOptions, timeout: requestOptions.timeout ?? 0 }).pipe(resultOf()))
  }

  /** The client's roots; rejects with InvalidParamsError (-32602) when the answer is not a list of file:// roots (MCP roots). */
  listRoots(options?: RequestOptions): Promise<ListRootsResult> {
    return lastValueFrom(this.request<ListRootsResult & JsonObject>('roots/list', undefined, options).pipe(resultOf())).then(checkRoots)
  }

  completeElicitation(elicitationId: string): void {
    this.notify('notifications/elicitation/complete', { elicitationId })
  }

  listChanged(kind: ListKind): void {
    if (this.#state.status !== 'operating') return
    this.notify(`notifications/${kind}/list_changed`)
  }

  /** A task this session created changed: `notifications/tasks/status` (MCP 2025-11-25; optional, sent while operating). */
  taskChanged(task: TaskState): void {
    if (this.#state.status !== 'operating') return
    this.notify('notifications/tasks/status' as never, withRelatedTask(taskToWire(task) as unknown as JsonObject, task.taskId) as never)
  }

  resourceUpdated(uri: string): void {
    // A URI this session watches through its own client of a mounted source: its updates come from there alone.
    if (this.#state.subscriptions.has(uri) && !this.#watches.isOwn(uri)) this.actor.send({ type: 'resource-updated', uri })
  }

  /** How this session's subscriptions are watched at a mounted source owning their URIs (see SessionWatches). */
  readonly #watches = new SessionWatches(this, uri => this.actor.send({ type: 'resource-updated', uri }))

  async close(): Promise<void> {
    await this.connection.close()
    await this.closed
  }


  // ---- handlers ----

  /**
   * The handler of one of the session's own methods (the legacy lifecycle, logging level, resource
   * subscriptions), the modern era's (discover, listen), or the router's, each served in the era its
   * request speaks; undefined for any other. Made when the session first meets the method and kept
   * on the connection from then on, so an idle session holds none of them. `server.method`'s
   * methods are looked up on each request instead: they may be removed.
   */
  #handlerFor(method: string): RequestHandler | undefined {
    const handler = this.#sessionHandler(method) ?? this.#routeHandler(method)
    if (handler !== undefined) {
      // initialize is answered once (a second is refused): not worth keeping.
      if (method !== 'initialize') this.connection.setRequestHandler(method, handler)
      return handler
    }
    const route = this.server.methods.get(method)
    return route === undefined ? undefined : (params, request) => this.#serve(route, params, request)
  }

  #sessionHandler(method: string): RequestHandler | undefined {
    const server = this.server
    switch (method) {
      case 'initialize': return params => this.#initialize(params)
      // The session's own methods go through the server's middleware too (initialize does not: the
      // handshake is the transport's business, and a refusal there would leave no session to answer).
      case 'logging/setLevel': return this.#guarded(method, params => {
        this.actor.send({ type: 'set-level', level: requireLevel(params) })
        return {}
      })
      case 'resources/subscribe': return this.#guarded(method, params => {
        const uri = requireUri(params)
        const subscriptions = this.#state.subscriptions
        const limit = server.options.maxSubscriptions ?? SERVER_DEFAULTS.maxSubscriptions
        if (!subscriptions.has(uri) && subscriptions.size >= limit) {
          throw new InvalidRequestError(`Invalid Request: this session already holds ${limit} resource subscriptions, the limit; unsubscribe first`, { limit })
        }
        if (!server.router.resourceExists(uri)) throw new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
        // A mounted source owning the URI watches it: counted by the server (shared), or for this session alone (see SessionWatches).
        // The answer waits until it does: an update the caller causes next is then seen.
        const watching = subscriptions.has(uri) ? undefined : this.#watches.watch(uri)
        this.actor.send({ type: 'subscribe', uri })
        return watching === undefined ? {} : watching.then(() => ({}))
      })
      case 'resources/unsubscribe': return this.#guarded(method, params => {
        const uri = requireUri(params)
        if (this.#state.subscriptions.has(uri)) this.#watches.unwatch(uri)
        this.actor.send({ type: 'unsubscribe', uri })
        return {}
      })
      // The modern era's own methods (a modern request on a stdio or WebSocket connection), through the middleware there.
      case 'server/discover':
      case 'subscriptions/listen': return modernHandler(server, this.scope, method)
    }
    return undefined
  }

  /** A router's method (the routes are fixed when the server is made). */
  #routeHandler(method: string): RequestHandler | undefined {
    const route = this.server.router.routes.get(method)
    return route === undefined ? undefined : (params, request) => this.#serve(route, params, request)
  }

  /** A session method's handler through the server's middleware, when it has any. */
  #guarded(method: string, handler: (params: JsonObject | undefined, request: IncomingRequest) => unknown): RequestHandler {
    return (params, request) => this.#guard(method, handler, params, request)
  }

  /** One request of the router's: in the era it speaks (the gate marked a modern one with its version). */
  #serve(route: RouteHandler, params: JsonObject | undefined, request: IncomingRequest): unknown {
    // The route is known already: no second lookup (modernHandler finds the same for a sessionless request).
    if (request.modernMeta !== undefined) return serveModern(this.scope, this.server.wrap(request.method, route), params, request)
    return this.server.wrap(request.method, route)(params, new SessionContext(this, request))
  }

  /** A session method through the server's middleware, when it has any. */
  #guard(method: string, handler: (params: JsonObject | undefined, request: IncomingRequest) => unknown, params: JsonObject | undefined, request: IncomingRequest): unknown {
    // Only legacy requests reach these methods (classify refuses them in the modern era).
    return this.server.throughMiddleware(method, params, () => new SessionContext(this, request), () => handler(params, request))
  }

  #initialize(params: JsonObject | undefined): JsonObject {
    const { protocolVersion, clientCapabilities, clientInfo, result } = initializeAnswer(this.server, params)
    this.actor.send({ type: 'initialize', protocolVersion, clientInfo, clientCapabilities })
    // Fixed for the session's life: what it was offered now.
    this.#capabilities = result.capabilities as ServerCapabilities
    // What it may see of each list now: a later change tells it only when that changes.
    this.server.listViews?.remember(this, this.#principal)
    return result
  }

}

/** A session actor's input: what its logic starts from, and the session it belongs to (for performEvent). */
interface SpawnInput extends SessionInput { readonly session: Session }

/** Does what a session's actor decided, for every session: the actor's input names its session. */
function performEvent(event: unknown, input: unknown): void {
  const { method, params } = event as SessionEvent
  ;(input as SpawnInput).session.notify(method, params)
}

/** The part of a session's state another instance needs to go on serving it. */
function saveState(state: SessionState): JsonObject {
  const saved: JsonObject = {
    status: state.status, protocolVersion: state.protocolVersion, clientCapabilities: state.clientCapabilities as JsonObject,
    logLevel: state.logLevel, subscriptions: [...state.subscriptions],
  }
  if (state.clientInfo !== undefined) saved.clientInfo = state.clientInfo as unknown as JsonObject
  return saved
}

/** A saved state read back (undefined when it is not one: the session then starts afresh). */
function restoreState(text: string, session: Session): SavedSession | undefined {
  let saved: unknown
  try { saved = JSON.parse(text) } catch { return undefined }
  if (!isJsonObject(saved)) return undefined
  const { status, protocolVersion, clientCapabilities, clientInfo, logLevel, subscriptions } = saved
  if ((status !== 'initializing' && status !== 'operating') || typeof protocolVersion !== 'string' || !isJsonObject(clientCapabilities)) return undefined
  const uris = Array.isArray(subscriptions) ? subscriptions.filter((uri): uri is string => typeof uri === 'string') : []
  return {
    status, protocolVersion, clientCapabilities: clientCapabilities as ClientCapabilities,
    clientInfo: isJsonObject(clientInfo) ? clientInfo as unknown as Implementation : undefined,
    logLevel: typeof logLevel === 'string' && LOGGING_LEVELS.includes(logLevel as LoggingLevel) ? logLevel as LoggingLevel : session.server.options.defaultLogLevel ?? SERVER_DEFAULTS.defaultLogLevel,
    subscriptions: uris,
  }
}

/** A roots/list answer as a handler may see it: its roots are file:// URIs (MCP roots), else -32602 as in the modern era. */
function checkRoots(result: ListRootsResult): ListRootsResult {
  const problem = rootsProblem((result as { roots?: unknown }).roots)
  if (problem !== undefined) throw new InvalidParamsError(`Invalid params: the roots/list result is not valid: ${problem}`)
  return result
}
