/**
 * Serving a modern-era request (MCP 2026-07-28): the parts that are not the router's. The request
 * arrives with its version and client capabilities in `_meta` (checked by the session's gate), runs
 * through the same {@link RouteHandler} a legacy session calls, with a {@link ModernContext}, and
 * its answer is finished for this era: `resultType`, the server's identity in `_meta`, cache hints,
 * or an `input_required` result when the handler asked the client for something (MRTR).
 */
import { principalKey } from '../../lib/auth.ts'
import { Observable, asyncScheduler, type Subscriber, type Subscription } from '../../lib/rx.ts'
import { settleOutcome, type OutcomeObserver } from '../../lib/outcome.ts'
import type { IncomingRequest } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import {
  InternalError, InvalidParamsError, McpError, MissingRequiredClientCapabilityError, UrlElicitationRequiredError, toModernWireError,
} from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { CACHEABLE_METHODS, INPUT_REQUIRED_METHODS, MetaKey } from '../../lib/schema/modern.ts'
import type { CacheHint } from './api.ts'
import { ModernContext } from './context.ts'
import type { ServingScope } from './core.ts'
import { paramsDigest } from './request-state.ts'
import { Round } from './round.ts'
export { Round } from './round.ts'
import { TASKS_EXTENSION } from '../../lib/tasks/state.ts'
import { taskToModernWire } from '../tasks/task.ts'
import type { RouteHandler } from './api.ts'
import type { ServerCore } from './core.ts'

/** Cache hints when nothing else says: always stale, and never shared across authorization contexts. */
export const DEFAULT_CACHE_HINT: CacheHint = { ttlMs: 0, cacheScope: 'private' }





/**
 * Runs a modern request through `route`: the requestState checked, the handler run with a
 * {@link ModernContext}, and its answer finished (a tool call's `Mcp-Param-*` headers are checked
 * by the router, where the tool is found). An Observable: unsubscribing (the client closed the stream, or cancelled) stops the handler. Its
 * errors carry only codes of this era ({@link toModernWireError}: never -32002 or -32042); a
 * handler's URL elicitation error becomes an input round ({@link askUrlElicitations}).
 */
export function serveModern(scope: ServingScope, route: RouteHandler, params: JsonObject | undefined, request: IncomingRequest): Observable<JsonObject> {
  return new Observable<JsonObject>(subscriber => {
    const serving = new ModernServing(scope, route, params, request, subscriber)
    if (params?.requestState === undefined && params?.inputResponses === undefined) {
      serving.run(new Round({}, undefined))
    } else {
      resumeRound(scope.server, request, params).then(round => serving.run(round), error => serving.fail(error))
    }
    return serving
  })
}

/**
 * One modern request being served: its runs (one per round), the handler of the run in progress,
 * and whether it asked. One object per request, its outcome delivered through {@link SERVED} (no
 * closures made per request on the way of one that asks nothing). Unsubscribing it stops the handler.
 */
class ModernServing {
  #handler: Subscription | undefined
  /** The run asked the client for input: its outcome is not the answer, the round's end is. */
  #isAsking = false
  #isOver = false
  #round: Round | undefined

  constructor(readonly scope: ServingScope, readonly route: RouteHandler, readonly params: JsonObject | undefined,
    readonly request: IncomingRequest, readonly subscriber: Subscriber<JsonObject>) {}

  fail(error: unknown): void {
    this.subscriber.error(error instanceof McpError ? toModernWireError(error) : error)
  }

  run(round: Round): void {
    if (this.#isOver) return
    this.#round = round
    const ctx = new ModernContext(this.scope, this.request, this.request.modernMeta!, round)
    round.asker = this
    let outcome: unknown
    try {
      outcome = this.route(this.params, ctx)
    } catch (error) {
      return this.failed(error)
    }
    this.#handler = settleOutcome(outcome, this, SERVED)
  }

  /** The run's first input request (see Round.ask): inputs asked in the same turn (Promise.all, or one after another without waiting) go out together: the round ends on the next macrotask. */
  asked(round: Round): void {
    this.#isAsking = true
    asyncScheduler.schedule(() => void this.#endRound(round))
  }

  /** The run's answer, unless it asked (the round's end answers then). */
  succeeded(result: unknown): void {
    if (this.#isAsking) return
    this.subscriber.next(finishResult(this.scope.server, this.request.method, this.params, result))
    this.subscriber.complete()
  }

  /** The run failed: a URL elicitation error becomes a round of its own; anything else the request's error (unless it asked). */
  failed(error: unknown): void {
    if (this.#isAsking) return
    const round = this.#round!
    if (error instanceof UrlElicitationRequiredError && askUrlElicitations(this.request.method, round, error, this.request.modernMeta!.clientCapabilities, reason => this.fail(reason))) return
    this.fail(error)
  }

  unsubscribe(): void {
    this.#isOver = true
    this.#handler?.unsubscribe()
  }

  async #endRound(round: Round): Promise<void> {
    this.#handler?.unsubscribe()
    round.end()
    if (this.#isOver) return
    const { request, params } = this
    const server = this.scope.server
    if (!INPUT_REQUIRED_METHODS.has(request.method)) {
      return this.fail(new InternalError(`Internal error: the handler of ${request.method} asked the client for input, which only tools/call, prompts/get and resources/read may do`))
    }
    const asked: Record<string, string> = {}
    const inputRequests: JsonObject = {}
    for (const [key, input] of round.asked!) {
      asked[key] = input.method
      inputRequests[key] = { method: input.method, params: input.params }
    }
    try {
      const requestState = await server.requestStates.seal({
        method: request.method, digest: await paramsDigest(params), principal: principalKey(request.principal),
        asked, answers: round.answers, data: round.data,
      })
      this.subscriber.next(finishResult(server, request.method, params, { resultType: 'input_required', inputRequests, requestState }))
      this.subscriber.complete()
    } catch (error) {
      this.fail(error)
    }
  }
}

/** Where every modern run's outcome goes, with its request's {@link ModernServing}. */
const SERVED: OutcomeObserver<unknown, ModernServing> = {
  value: (serving, result) => serving.succeeded(result),
  error: (serving, error) => serving.failed(error),
}

/** The key of the `index`th URL elicitation of a {@link UrlElicitationRequiredError}, in its input round. */
const urlElicitationKey = (index: number) => `url-elicitation-${index + 1}`

/**
 * A handler written for MCP 2025-11-25 throws {@link UrlElicitationRequiredError} (-32042), whose
 * `data.elicitations` are URL-mode elicitation requests the user completes before the client
 * retries. The modern era has no such error (2026-07-28 basic: implementations MUST NOT emit
 * -32042); its way is an input round (2026-07-28 elicitation, "URL Mode Flow": an
 * InputRequiredResult carrying `elicitation/create` with `mode: "url"`, then the retry). So each
 * of them is asked in this round (keys `url-elicitation-1`, ...), asked again while the handler
 * still throws on the retry, and needs the client's `elicitation.url` capability (-32021
 * otherwise). An answer other than accept ends the request with -32603: the handler cannot go on,
 * and asking the user again would loop. Returns false (the error then goes as -32603) for a
 * method that cannot ask. The error always lists complete URL elicitations (its constructor
 * refuses anything else), so each is asked as it is.
 */
function askUrlElicitations(method: string, round: Round, error: UrlElicitationRequiredError, capabilities: object, fail: (error: unknown) => void): boolean {
  if (!INPUT_REQUIRED_METHODS.has(method)) return false
  // Every one is a complete URL elicitation (mode, message, valid url, elicitationId): the error cannot be made otherwise.
  const elicitations = error.data.elicitations as unknown as JsonObject[]
  for (let index = 0; index < elicitations.length; index++) {
    const answer = round.answers[urlElicitationKey(index)]
    if (isJsonObject(answer) && answer.action !== 'accept') {
      fail(new InternalError(`Internal error: ${error.message} (the client answered ${JSON.stringify(answer.action)} to the URL elicitation it needs)`))
      return true
    }
  }
  for (let index = 0; index < elicitations.length; index++) {
    const key = urlElicitationKey(index)
    // Answered in the round before, and still needed: asked anew (the answer is not for this run).
    delete round.answers[key]
    round.ask('elicitation/create', elicitations[index]!, capabilities, key).catch(fail)
  }
  return true
}

/**
 * The round a retry continues: its requestState opened and checked (authentic, not expired, of
 * this principal, method and parameters, and not used before), and the answers the handler may
 * take: the earlier rounds' (sealed in the state) and, of the ones this retry brings, those to the
 * input requests the state's round made. An answer is checked against the method (and for an
 * elicitation, the requestedSchema) of the input that takes it when the handler asks.
 *
 * MCP 2026-07-28 MRTR: input responses answer the input requests of the round the state
 * continues; keys the state's round did not ask are ignored (the spec: ignore what the server does
 * not recognize), so a retry never answers a later round ahead of it. Without a state there is no
 * round to continue: the client answered ahead (the conformance suite sends the first round's
 * answers with the first request). Such answers are taken only for the inputs the handler asks
 * before it carries anything of its own (`ctx.setRequestState`), each checked like any answer
 * (its method's shape, an elicitation's requestedSchema); once the handler carries data they no
 * longer count, so an answer no round asked for is never combined with what the server carried.
 * They give a client nothing it could not give by answering a round: the answer is its word
 * either way, and no state of the server's is involved.
 *
 * A state is used once: it is claimed in the server's {@link RequestStateStore} only once it has
 * passed every check (a refused retry does not spend it), and a second retry with it is refused
 * with -32602 (`reason: 'used'`), so what the handler does after its last input runs at most once
 * per state.
 */
async function resumeRound(server: ServerCore, request: IncomingRequest, params: JsonObject): Promise<Round> {
  const method = request.method
  const responses = params.inputResponses
  if (responses !== undefined && !isJsonObject(responses)) throw new InvalidParamsError('Invalid params: inputResponses must be an object of answers by key')
  if (params.requestState === undefined) {
    // No round to continue: the client answered ahead (see above). No prototype, as below.
    const ahead: Record<string, unknown> = Object.create(null)
    return new Round(responses === undefined ? ahead : Object.assign(ahead, responses), undefined, true)
  }
  const state = await server.requestStates.open(params.requestState)
  if (typeof state === 'string') {
    throw new InvalidParamsError(state === 'expired' ? 'Invalid params: requestState has expired; send the request again without it'
      : 'Invalid params: requestState failed its integrity check', { reason: state })
  }
  if (state.method !== method || state.principal !== principalKey(request.principal) || state.digest !== await paramsDigest(params)) {
    throw new InvalidParamsError('Invalid params: requestState belongs to another request', { reason: 'mismatch' })
  }
  if (!await server.usedRequestStates.claim(state.id, state.expires)) {
    throw new InvalidParamsError('Invalid params: requestState has already been used; send the request again without it', { reason: 'used' })
  }
  // Only answers to what the state's round asked; what earlier rounds answered stays as it was answered.
  // No prototype: a key is only ever an own property (a "__proto__" key included).
  const answers: Record<string, unknown> = Object.create(null)
  if (responses !== undefined && isJsonObject(state.asked)) {
    for (const key of Object.keys(state.asked)) if (Object.hasOwn(responses, key)) answers[key] = responses[key]
  }
  return new Round(Object.assign(answers, state.answers), state.data)
}

/**
 * A result as the modern era sends it: `resultType` (complete unless the handler's own says
 * otherwise), the server's identity in `_meta` (in full on discover, name, title and version on
 * the others), and for cacheable results `ttlMs` and `cacheScope`
 * (the registration's, else the server's for the method, else always-stale private).
 */
export function finishResult(server: ServerCore, method: string, params: JsonObject | undefined, result: unknown): JsonObject {
  // A copy (the handler may return the same object every time), `resultType` first so that the
  // handler's own wins; written out rather than spread with computed keys, which costs on this path.
  const body: JsonObject = Object.assign({ resultType: 'complete' }, isJsonObject(result) ? result : undefined)
  // Every result names the server; discover's carries all it says of itself (icons, website), the
  // others its name and version only, so a small result stays small.
  const info = method === 'server/discover' ? server.info : server.briefInfo
  const own = body._meta
  if (isJsonObject(own)) {
    const meta = Object.assign({}, own)
    meta[MetaKey.serverInfo] = info
    body._meta = meta
  } else body._meta = { 'io.modelcontextprotocol/serverInfo': info }
  if (body.resultType === 'complete' && body.ttlMs === undefined) {
    const hint = CACHEABLE_METHODS.has(method) ? cacheHintOf(server, method, params) : server.methodCacheHints?.get(method)
    if (hint !== undefined) {
      body.ttlMs = hint.ttlMs
      body.cacheScope = hint.cacheScope
    }
  }
  return body
}

function cacheHintOf(server: ServerCore, method: string, params: JsonObject | undefined): CacheHint {
  if (method === 'resources/read' && typeof params?.uri === 'string') {
    const own = server.router.cacheHintOfResource(params.uri)
    if (own !== undefined) return own
  }
  return server.options.cacheHints?.[method as keyof NonNullable<typeof server.options.cacheHints>] ?? DEFAULT_CACHE_HINT
}

/** The answer to `server/discover`: versions, capabilities, instructions (finished like any result). */
export function discover(server: ServerCore): JsonObject {
  // The legacy `tasks` capability is not of this era: the tasks extension says it here.
  const { tasks: _legacyTasks, ...capabilities } = server.capabilities()
  const result: JsonObject = { supportedVersions: [...server.versions.all], capabilities: capabilities as JsonObject }
  if (server.options.instructions !== undefined) result.instructions = server.options.instructions
  return result
}

/** What a `subscriptions/listen` may ask for, and the notification each brings. */
const LIST_FILTERS = { tools: 'toolsListChanged', prompts: 'promptsListChanged', resources: 'resourcesListChanged' } as const

/**
 * `subscriptions/listen`: one long-lived request. Its first message is the acknowledgement of the
 * part of the filter the server honours (what it has no capability for is left out, as are kinds it
 * does not know), then list changes and resource updates from the event bus, each tagged with the
 * subscription id (the request's id).
 *
 * How it ends (MCP 2026-07-28 subscriptions, "Cancellation", and cancellation):
 * - the client cancels it (closes its HTTP response stream, or sends `notifications/cancelled`
 *   elsewhere): unsubscribing stops it, and nothing more is sent for it, no response and no
 *   cancellation (the client ended it and knows);
 * - the server tears it down (it closes): `notifications/cancelled` naming the listen request (a
 *   server MUST send it when it tears a subscription stream down), tagged with the subscription id
 *   like every message of the stream, then the completion result (graceful closure: SHOULD),
 *   and the stream closes. The notification goes first: on HTTP the response ends the stream.
 * - the transport closes: nothing can be sent; the client sees a drop.
 */
export function listen(scope: ServingScope, params: JsonObject | undefined, request: IncomingRequest): Observable<JsonObject> {
  return new Observable<JsonObject>(subscriber => {
    const server = scope.server
    const filter = params?.notifications
    if (!isJsonObject(filter)) return subscriber.error(new InvalidParamsError('Invalid params: subscriptions/listen needs a notifications filter object'))
    const capabilities = server.capabilities()
    const accepted: JsonObject = {}
    for (const [kind, key] of Object.entries(LIST_FILTERS)) {
      if (filter[key] === true && (capabilities[kind as keyof typeof LIST_FILTERS] as { listChanged?: boolean } | undefined)?.listChanged) accepted[key] = true
    }
    const uris = new Set<string>()
    if (Array.isArray(filter.resourceSubscriptions) && capabilities.resources?.subscribe) {
      const limit = server.options.maxSubscriptions ?? 1000
      for (const uri of filter.resourceSubscriptions) if (typeof uri === 'string' && uris.size < limit) uris.add(uri)
      accepted.resourceSubscriptions = [...uris]
    }
    const taskIds = new Set<string>()
    if (filter.taskIds !== undefined) {
      // The tasks extension: task notifications only for a client that declared it on this request.
      const extensions = request.modernMeta?.clientCapabilities.extensions
      if (!isJsonObject(extensions) || !isJsonObject(extensions[TASKS_EXTENSION])) {
        return subscriber.error(new MissingRequiredClientCapabilityError(`Missing required client capability: extension ${TASKS_EXTENSION} (task notifications)`,
          { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } }))
      }
      if (!Array.isArray(filter.taskIds)) return subscriber.error(new InvalidParamsError('Invalid params: notifications.taskIds must be an array of task ids'))
      if (server.tasks.isEnabled) {
        const limit = server.options.maxSubscriptions ?? 1000
        for (const id of filter.taskIds) if (typeof id === 'string' && taskIds.size < limit) taskIds.add(id)
        accepted.taskIds = [...taskIds]
      }
    }
    // Who the requestor is, to hear only of tasks it owns (an anonymous one owns a task by its id).
    const ownerCtx = taskIds.size > 0 ? new ModernContext(scope, request, request.modernMeta!, new Round({}, undefined)) : undefined
    const tag = { [MetaKey.subscriptionId]: request.id }
    const send = (method: string, extra: JsonObject = {}) => {
      if (request.isDone) return
      const written = scope.host.notify(method, { _meta: tag, ...extra }, request.id)
      written?.catch(() => {})
    }
    // Counted by the server while the stream lasts: a mounted source owning a URI watches it meanwhile.
    // The acknowledgement waits until each such source does: an update the client causes next is then seen.
    const watching: Promise<void>[] = []
    for (const uri of uris) {
      const ready = server.subscribed(uri)
      if (ready !== undefined) watching.push(ready)
    }
    let events: Subscription | undefined
    let isOver = false
    const start = () => {
      if (isOver) return
      send('notifications/subscriptions/acknowledged', { notifications: accepted })
      // What this stream's principal may see of each list now: a later change tells it only when that changes.
      const views = server.listViews
      views?.remember(accepted, request.principal)
      events = server.events.subscribe(event => {
        if (event.type === 'list_changed') {
          if (accepted[LIST_FILTERS[event.kind]] === true && (views === undefined || views.changed(accepted, request.principal, event.kind))) send(`notifications/${event.kind}/list_changed`)
        } else if (event.type === 'resource_updated') {
          if (uris.has(event.uri)) send('notifications/resources/updated', { uri: event.uri })
        } else if (ownerCtx !== undefined && taskIds.has(event.task.taskId) && event.task.owner === server.tasks.ownerOf(ownerCtx, event.task.taskId)) {
          send('notifications/tasks', taskToModernWire(event.task, true) as JsonObject)
        }
      })
    }
    if (watching.length === 0) start()
    else void Promise.all(watching).then(start)
    const closing = server.closing.subscribe(() => {
      send('notifications/cancelled', { requestId: request.id, reason: 'The server is shutting down' })
      subscriber.next({ _meta: tag })
      subscriber.complete()
    })
    return () => {
      isOver = true
      events?.unsubscribe()
      closing.unsubscribe()
      for (const uri of uris) server.unsubscribed(uri)
    }
  })
}

