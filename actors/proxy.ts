/**
 * `proxy(client)`: a connected client (any transport, either era) as a {@link Mountable}, so a
 * server can serve what that client's server offers as part of its own (`server.mount(prefix,
 * proxy(client))`); and `mountableServer(other)`, what `server.mount(prefix, otherServer)` mounts:
 * the same proxy, of a client connected to `other` in-process over a memory pair.
 *
 * ```
 * caller ─ tools/call a__echo ─> mounting server (router: forward, no validation)
 *        <─ progress, result ───   └─ client.request('tools/call', { name: 'echo' }, { answerInput }) ─> source
 *        <─ sampling/elicit/roots ─────── answerInput: asked of the caller's ctx <─ the source's asks
 *        <─ log messages ──────────────── onLog: the caller's own (ctx.log) <─ the source's, about that request
 * ```
 *
 * A modern caller's asks are `input_required` rounds: its call is held across them (held-calls.ts),
 * so the source serves it once. A caller's task whose work is a downstream task cancels that task
 * (`tasks/cancel`) when it is cancelled.
 */
import {
  EMPTY, Observable, Subject, catchError, combineLatest, concatMap, defer, filter, from, lastValueFrom, map, merge, mergeMap, of, share, startWith, toArray,
  type SchedulerLike, type Subscription,
} from '../lib/rx.ts'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import { MethodNotFoundError } from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import { createMemoryPair } from '../lib/memory-pair.ts'
import type { RequestOptions } from '../lib/connection-contract.ts'
import type { CreateMessageParams, ElicitParams, LoggingLevel, ResourceTemplate, Root } from '../lib/schema/types.ts'
import { connect, type ClientOptions, type McpClient } from './client.ts'
import type { McpServer } from './server/api.ts'
import type { Mountable, MountCaller, MountCallerSession, MountLog, MountOffer, WatchEvent } from './server/mountable.ts'
import { HeldCalls } from './held-calls.ts'

/** Options of {@link proxy}. */
export interface ProxyOptions {
  /**
   * `'shared'` (default): every caller's requests go through `client`. `'session'`: each caller's
   * legacy session gets a client of its own, made by `connect` on its first request and closed when
   * the session ends, whose sampling, elicitation and roots are that session's (so the source sees
   * each user's roots, and its subscriptions are per user). Modern-era callers, which have no
   * session, and the lists, use `client`.
   */
  mode?: 'shared' | 'session'
  /**
   * `mode: 'session'`: makes the client of one caller session. Pass `options` (its handlers ask
   * that session, its roots are that session's) to `connect`, with the transport to the same server.
   */
  connect?: (options: ClientOptions) => Promise<McpClient>
  /** Close `client` when the mount is removed (default false: whoever connected it closes it). */
  closeClient?: boolean
  /** The log level asked of the source (`logging/setLevel`), so callers get its messages at theirs (default 'debug'; false asks nothing). */
  logLevel?: LoggingLevel | false
  /** Where failures nobody awaits go (a relisting that failed, a watch the source refused); default nowhere. */
  reportError?: (error: unknown) => void
  /**
   * A modern-era caller's call whose source asks (sampling, elicitation, roots) is held across the
   * caller's `input_required` rounds, so it runs once downstream: at most `maxCalls` wait at once,
   * each at most `ttlMs` for the caller's retry (then it is cancelled downstream, and a late retry
   * starts it anew). `false`: never held, each round forwards the call again.
   */
  holdCalls?: { maxCalls?: number; ttlMs?: number } | false
  /** The clock of held calls' time limits (default: RxJS's async scheduler). */
  scheduler?: SchedulerLike
  /**
   * The source's tools, resources and prompts as someone who lists them already keeps them (a host
   * following its servers): the proxy takes them from here and lists only the templates itself, so
   * no list is fetched twice. Each emission is the whole of those lists now.
   */
  listed?: Observable<ListedOffer>
}

/** What `ProxyOptions.listed` gives: the lists of a source that another listing keeps. */
export type ListedOffer = Pick<MountOffer, 'tools' | 'resources' | 'prompts'>

/** DEFAULTS of {@link ProxyOptions}. */
export const PROXY_DEFAULTS = { mode: 'shared', logLevel: 'debug', holdCalls: { maxCalls: 1000, ttlMs: 10 * 60_000 } } as const

/**
 * A connected client as a source a server mounts: its server's tools, resources, templates and
 * prompts, listed across every page and relisted on each list_changed; each request forwarded as
 * it came, what the source asks while serving it answered by the caller (`answerInput`), progress
 * passed back, cancellation passed on. See {@link ProxyOptions} for the modes.
 * @example
 * const remote = await connect(httpClient('https://example.com/mcp'), { name: 'gw', version: '1' })
 * server.mount('remote', proxy(remote))   // remote__search, its resources, its prompts
 * @see McpServer.mount
 */
export function proxy(client: McpClient, options: ProxyOptions = {}): Mountable {
  if ((options.mode ?? PROXY_DEFAULTS.mode) === 'session' && options.connect === undefined) throw new TypeError("proxy: mode 'session' needs a connect function")
  return new ClientSource(Promise.resolve(client), options)
}

/**
 * Another server of this process as a mountable source: a client connected to it over a memory
 * pair (made on first need), declaring sampling, elicitation (form and URL) and roots so the
 * mounted server may ask; its asks reach the caller of the request that raised them. In `'session'`
 * mode, each caller session gets its own in-process client. Removing the mount closes them.
 */
export function mountableServer(other: McpServer, mode: 'shared' | 'session' = 'shared'): Mountable {
  const open = async (options: ClientOptions): Promise<McpClient> => {
    const [clientSide, serverSide] = createMemoryPair()
    await other.listen(serverSide)
    return connect(clientSide, { name: 'rxmcp-mount', version: '1.0.0' }, options)
  }
  return new ClientSource(open(proxyClientOptions()), { mode, connect: open, closeClient: true })
}

/**
 * Options for a client that {@link proxy} will forward through: it declares sampling (with tools),
 * elicitation (form and URL) and roots, so its server may ask them while serving a call (a server
 * asks only what the client declared); the proxy answers those through the caller. What the server
 * asks outside any forwarded call (no caller to answer) is refused, and its roots are none, unless
 * `fallback` gives handlers and roots of its own.
 * @example
 * const client = await connect(stdioClient({ command: 'docs-server' }), info, proxyClientOptions())
 * server.mount('docs', proxy(client))
 */
export function proxyClientOptions(fallback: Pick<ClientOptions, 'sampling' | 'elicitation' | 'roots'> = {}): ClientOptions {
  const uncorrelated = (): never => { throw new MethodNotFoundError('No caller to answer this request: it was not made while serving a call') }
  return {
    sampling: fallback.sampling ?? uncorrelated,
    samplingTools: true,
    elicitation: { form: fallback.elicitation?.form ?? uncorrelated, url: fallback.elicitation?.url ?? uncorrelated },
    roots: fallback.roots ?? [],
  }
}

/** What the proxy asks the source for at once: every list change (its resource updates come per watch). */
const LIST_CHANGES = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true } as const

class ClientSource implements Mountable {
  readonly offers: Observable<MountOffer>
  readonly logs: Observable<MountLog>
  readonly #client: Promise<McpClient>
  readonly #options: ProxyOptions
  /** `execution.taskSupport` of each tool the source listed last (by its own name). */
  #taskSupport = new Map<string, string>()
  /** Mode 'session': the client of each caller session, by session id, while the session lasts. */
  readonly #sessions = new Map<string, Promise<McpClient>>()
  /** Subscriptions to the sessions' roots changes, ended with the proxy. */
  readonly #sessionWatches = new Set<Subscription>()
  #isClosed = false
  /** The shared client once its promise settled (forward's fast path). */
  #connected: McpClient | undefined
  /** Modern callers' calls held across their rounds; undefined when `holdCalls: false`. */
  readonly #held: HeldCalls | undefined
  /** The source's log messages about a forwarded request, with its caller. */
  readonly #callerLogs = new Subject<MountLog>()

  constructor(client: Promise<McpClient>, options: ProxyOptions) {
    this.#client = client
    this.#options = options
    client.then(connected => { this.#connected = connected }, () => {})
    const report = (error: unknown) => options.reportError?.(error)
    // The first listing once the source acknowledged the listen stream (no change is missed
    // between them), and a relisting at each list change; one listing at a time, the newest wins.
    const listed = options.listed
    this.offers = from(client).pipe(
      mergeMap(source => listed !== undefined ? this.#withTemplates(source, listed, report) : source.listen(LIST_CHANGES).pipe(
        concatMap(() => from(this.#list(source)).pipe(catchError(error => { report(error); return EMPTY }))),
        // The client closed: the source is gone.
        catchError(error => { if (!this.#isClosed) report(error); return EMPTY }))),
      share(),
    )
    const level = options.logLevel ?? PROXY_DEFAULTS.logLevel
    // Those about no forwarded request the client could tie (it keeps those for the request's caller).
    const untied = from(client).pipe(
      mergeMap(source => {
        if (level !== false && source.serverCapabilities.logging !== undefined) source.setLoggingLevel(level).catch(report)
        return source.notifications('notifications/message')
      }),
      map(params => compactLog(params as unknown as JsonObject)),
    )
    this.logs = merge(untied, this.#callerLogs).pipe(share())
    this.watchFor = (options.mode ?? PROXY_DEFAULTS.mode) !== 'session' ? undefined
      : (uri, session) => this.#watchOn(defer(() => from(this.#sessionClient(session))), uri)
    const hold = options.holdCalls ?? PROXY_DEFAULTS.holdCalls
    this.#held = hold === false ? undefined : new HeldCalls({
      maxCalls: hold.maxCalls ?? PROXY_DEFAULTS.holdCalls.maxCalls, ttlMs: hold.ttlMs ?? PROXY_DEFAULTS.holdCalls.ttlMs, scheduler: options.scheduler,
      log: (params, caller) => this.#callerLogs.next(compactLog(params, caller)),
    })
  }

  holds(caller: MountCaller): boolean {
    return this.#held?.holds(caller) ?? false
  }

  /** Every list of the source, across pages; a kind it does not offer is empty. */
  async #list(source: McpClient): Promise<MountOffer> {
    const capabilities = source.serverCapabilities
    const all = <T>(items: Observable<T>) => lastValueFrom(items.pipe(toArray()))
    const [tools, resources, templates, prompts] = await Promise.all([
      capabilities.tools !== undefined ? all(source.tools()) : [],
      capabilities.resources !== undefined ? all(source.resources()) : [],
      // A server with resources but no templates may answer -32601: none then.
      capabilities.resources !== undefined ? all(source.resourceTemplates()).catch(() => []) : [],
      capabilities.prompts !== undefined ? all(source.prompts()) : [],
    ])
    this.#taskSupport = new Map(tools.map(tool => [tool.name, tool.execution?.taskSupport ?? 'forbidden']))
    return { tools, resources, templates, prompts, completions: capabilities.completions !== undefined, subscribe: capabilities.resources?.subscribe === true }
  }

  /**
   * The offers made of lists someone else keeps (`ProxyOptions.listed`) and the templates, which the
   * proxy lists itself (again at each resources list_changed): each list is fetched once. The given
   * lists go out as they come, templates none until the first listing of them answered.
   */
  #withTemplates(source: McpClient, listed: Observable<ListedOffer>, report: (error: unknown) => void): Observable<MountOffer> {
    const capabilities = source.serverCapabilities
    const templates: Observable<readonly ResourceTemplate[]> = capabilities.resources === undefined ? of([]) : source.listen({ resourcesListChanged: true }).pipe(
      // A server with resources but no templates may answer -32601: none then.
      concatMap(() => from(lastValueFrom(source.resourceTemplates().pipe(toArray()))).pipe(catchError(() => of([])))),
      catchError(error => { if (!this.#isClosed) report(error); return EMPTY }),
      startWith([]),
    )
    const completions = capabilities.completions !== undefined
    const subscribe = capabilities.resources?.subscribe === true
    return combineLatest([listed, templates]).pipe(map(([lists, listedTemplates]) => {
      this.#taskSupport = new Map(lists.tools.map(tool => [tool.name, tool.execution?.taskSupport ?? 'forbidden']))
      return { tools: lists.tools, resources: lists.resources, prompts: lists.prompts, templates: listedTemplates, completions, subscribe }
    }))
  }

  forward(method: string, params: JsonObject | undefined, caller: MountCaller): Observable<JsonObject> {
    // The common case, the shared client once connected: no Promise turn per call.
    const shared = this.#options.mode !== 'session' || caller.session === undefined ? this.#connected : undefined
    if (shared !== undefined) return this.#forwardOn(shared, method, params, caller)
    return defer(() => from(this.#clientFor(caller))).pipe(mergeMap(source => this.#forwardOn(source, method, params, caller)))
  }

  /** One forwarded request on `source` (see forward). */
  #forwardOn(source: McpClient, method: string, params: JsonObject | undefined, caller: MountCaller): Observable<JsonObject> {
    const name = params?.name
    // A call the mounting server runs as a task, of a tool the source runs only as a task: a task there too, awaited.
    if (method === 'tools/call' && caller.task !== undefined && typeof name === 'string' && this.#taskSupport.get(name) === 'required') {
      const args = isJsonObject(params!.arguments) ? params!.arguments : undefined
      return awaitTask(source, name, args, answerThrough(caller), this.#options.reportError)
    }
    // No timeout of its own: the caller's cancellation (and its own timeout) ends it.
    const progress = caller.progressToken !== undefined
    // A modern caller's asks are rounds of its request: the call is held across them (held-calls.ts).
    if (caller.era === 'modern' && caller.task === undefined && this.#held !== undefined) {
      return this.#held.run(caller, hooks => source.request<JsonObject>(method, params ?? {}, { timeout: 0, progress, answerInput: hooks.answerInput, onLog: hooks.onLog }))
    }
    const onLog = (log: JsonObject) => this.#callerLogs.next(compactLog(log, caller))
    const requestOptions: RequestOptions = { timeout: 0, progress, answerInput: answerThrough(caller), onLog }
    const events = source.request<JsonObject>(method, params ?? {}, requestOptions)
    // One stage, not three operators: this runs once per forwarded request.
    return new Observable<JsonObject>(subscriber => events.subscribe({
      next: event => { if (event.type === 'progress') caller.progress(event.progress, event.total, event.message); else subscriber.next(event.result) },
      error: error => subscriber.error(error),
      complete: () => subscriber.complete(),
    }))
  }

  watch(uri: string): Observable<WatchEvent> {
    return this.#watchOn(from(this.#client), uri)
  }

  /**
   * `'watching'` once the source acknowledged the subscription, then `'updated'` each time `uri`
   * changes there; asked through the client `client` gives, while subscribed.
   */
  #watchOn(client: Observable<McpClient>, uri: string): Observable<WatchEvent> {
    return client.pipe(
      mergeMap(source => source.listen({ resourceSubscriptions: [uri] })),
      filter(event => event.type === 'acknowledged' || (event.type === 'notification' && event.method === 'notifications/resources/updated' && event.params.uri === uri)),
      map((event): WatchEvent => event.type === 'acknowledged' ? 'watching' : 'updated'),
      catchError(error => { this.#options.reportError?.(error); return EMPTY }),
    )
  }

  /**
   * Mode 'session': watches `uri` through `session`'s own client (made now if the session has made
   * no request yet), so the source sees this user's subscription, and its updates reach this
   * session alone. Undefined in mode 'shared' (the server counts subscribers and {@link watch}es once).
   */
  readonly watchFor: ((uri: string, session: MountCallerSession) => Observable<WatchEvent>) | undefined

  /** The client that serves `caller`: its session's own (mode 'session'), else the shared one. */
  #clientFor(caller: MountCaller): Promise<McpClient> {
    const session = caller.session
    if (this.#options.mode !== 'session' || session === undefined) return this.#client
    return this.#sessionClient(session)
  }

  /** `session`'s own client, made on first need and closed with the session (the shared one once the proxy closed). */
  #sessionClient(session: MountCallerSession): Promise<McpClient> {
    if (this.#isClosed) return this.#client
    let client = this.#sessions.get(session.id)
    if (client === undefined) {
      client = this.#openFor(session)
      this.#sessions.set(session.id, client)
      // A failed start is not kept: the session's next request tries again.
      client.catch(() => this.#sessions.delete(session.id))
      void session.closed.then(async () => {
        this.#sessions.delete(session.id)
        await (await client!).close()
      }).catch(() => {})
    }
    return client
  }

  /** Makes a session's own client: its handlers ask that session, its roots are that session's (and follow its changes). */
  async #openFor(session: MountCallerSession): Promise<McpClient> {
    const declared = session.state.clientCapabilities
    const hasRoots = declared.roots !== undefined
    const roots: Root[] | undefined = hasRoots ? (await session.listRoots()).roots : undefined
    const elicitation = isJsonObject(declared.elicitation) ? declared.elicitation : undefined
    // MCP 2025-06-18 declared elicitation as `{}`: form mode.
    const hasForm = elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined)
    const options: ClientOptions = {
      sampling: declared.sampling !== undefined ? params => session.sample(params as CreateMessageParams) : undefined,
      elicitation: elicitation === undefined ? undefined : {
        form: hasForm ? params => session.elicit(params as ElicitParams) : undefined,
        url: elicitation.url !== undefined ? params => session.elicit(params as ElicitParams) : undefined,
      },
      roots,
    }
    const client = await this.#options.connect!(options)
    if (hasRoots) {
      // The session's roots changed: the source is told through its own client.
      const watch = session.connection.notifications('notifications/roots/list_changed').pipe(
        concatMap(() => from(session.listRoots()).pipe(catchError(error => { this.#options.reportError?.(error); return EMPTY }))),
      ).subscribe(result => { try { client.setRoots(result.roots) } catch (error) { this.#options.reportError?.(error) } })
      this.#sessionWatches.add(watch)
      void client.closed.then(() => { watch.unsubscribe(); this.#sessionWatches.delete(watch) })
    }
    return client
  }

  async close(): Promise<void> {
    this.#isClosed = true
    this.#held?.close()
    for (const watch of this.#sessionWatches) watch.unsubscribe()
    const sessions = [...this.#sessions.values()]
    this.#sessions.clear()
    await Promise.all(sessions.map(client => client.then(each => each.close(), () => {})))
    if (this.#options.closeClient === true) await (await this.#client).close()
  }
}

/**
 * Calls `name` on `source` as a task and emits its result. Unsubscribing before the result (the
 * caller's task was cancelled, or its session ended) cancels the downstream task (`tasks/cancel`),
 * since following it stops there and nobody would end it; before the task exists, the call itself
 * is cancelled (`notifications/cancelled`).
 */
function awaitTask(source: McpClient, name: string, args: JsonObject | undefined, answerInput: NonNullable<RequestOptions['answerInput']>,
  report: ((error: unknown) => void) | undefined): Observable<JsonObject> {
  return new Observable<JsonObject>(subscriber => {
    /** The downstream task's id once the source created it, until it settled. */
    let taskId: string | undefined
    const following = source.callToolAsTask(name, args, { timeout: 0, answerInput }).subscribe({
      next: event => {
        if (event.type === 'task') {
          taskId = event.task.taskId
          if (event.task.status === 'completed' || event.task.status === 'failed' || event.task.status === 'cancelled') taskId = undefined
          return
        }
        taskId = undefined
        subscriber.next(event.result as unknown as JsonObject)
      },
      error: error => { taskId = undefined; subscriber.error(error) },
      complete: () => { taskId = undefined; subscriber.complete() },
    })
    return () => {
      following.unsubscribe()
      if (taskId !== undefined) source.tasks.cancel(taskId).catch(error => report?.(error))
    }
  })
}

/** Answers what the source asks while serving a request through the caller's context, in the caller's era. */
function answerThrough(caller: MountCaller): NonNullable<RequestOptions['answerInput']> {
  return (method, params) => {
    switch (method) {
      case 'sampling/createMessage': return caller.sample(params as unknown as CreateMessageParams) as unknown as Promise<JsonObject>
      case 'elicitation/create': return caller.elicit(params as unknown as ElicitParams) as unknown as Promise<JsonObject>
      case 'roots/list': return caller.listRoots() as unknown as Promise<JsonObject>
      default: return Promise.reject(new MethodNotFoundError(`Method not found: ${method}`))
    }
  }
}

/** A `notifications/message`'s params as a {@link MountLog}, for `caller` when it was about the caller's request. */
function compactLog(params: JsonObject, caller?: MountCaller): MountLog {
  const level = params.level as LoggingLevel
  const log: { level: LoggingLevel; logger?: string; data: unknown; caller?: MountCaller } = { level, data: params.data }
  if (typeof params.logger === 'string') log.logger = params.logger
  if (caller !== undefined) log.caller = caller
  return log
}
