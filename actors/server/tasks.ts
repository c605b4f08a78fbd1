/**
 * A server's tasks, both eras: when a request becomes a task, the task actors running in this
 * process, and the task methods. A task lives in the server, not in a connection: its state is
 * kept in the {@link TaskStore} (written before the CreateTaskResult goes out, and after every
 * change), so a client may drop, reconnect and poll. Each change, once stored, goes on the
 * server's event bus, which sessions turn into `notifications/tasks/status` (legacy) and listen
 * streams into `notifications/tasks` (modern).
 *
 * The actors, in the server's actor system (`server.system`):
 *
 *   tasks (systemId 'tasks', tasksLogic)     spawned with the first task; stopped when the server closes
 *     └─ <taskId> (taskLogic)                one per task running here: TTL timer, state machine
 *          └─ work (fromObservable)          the handler's work; status, input requests and the
 *                                            outcome come to the task as messages
 *
 * Nothing here reads a task actor's state: its `changed` events are stored and published, and the
 * store answers tasks/get, tasks/list and tasks/result.
 */
import { principalKey } from '../../lib/auth.ts'
import {
  EMPTY, asyncScheduler, catchError, defer, filter, firstValueFrom, from, map, merge, mergeMap, take, throwError, timer,
  type Observable, type SchedulerLike,
} from '../../lib/rx.ts'
import { untilAborted } from '../../lib/operators/until-aborted.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InternalError, InvalidParamsError, McpError, MethodNotFoundError, MissingRequiredClientCapabilityError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import type { ServerContext } from './api.ts'
import type { ServerEvent } from '../../lib/events.ts'
import { outcomePromise, type HandlerOutcome } from '../request.ts'
import { TaskStoreFullError, createMemoryTaskStore, randomTaskId, type TaskStore } from '../tasks/store.ts'
import { clientAddressKey } from '../../lib/client-address.ts'
import { isTerminalStatus, settledAnswer, taskToModernWire, taskToWire, type TaskState } from '../tasks/task.ts'
import {
  taskLogic, tasksLogic, type TaskActorState, type TaskEvent, type TaskInput, type TaskLogicMessage, type TasksEvent,
} from '../tasks/task-logic.ts'
import { createActorSystem, type ActorLogic, type ActorRef, type ActorSystem } from '../actor.ts'
import { TaskContext } from './task-context.ts'
import { IS_ERROR_RESULT, runWork } from './task-work.ts'
import { SERVER_TASKS_DEFAULTS, TOO_MANY_RUNNING_TASKS_ERROR_CODE, TooManyRunningTasksError, count } from './task-limits.ts'
import { withCursor } from '../../lib/cursor.ts'
import type { ServerCore, SessionCore, TasksCore } from './core.ts'

import { TASKS_EXTENSION } from '../../lib/tasks/state.ts'
export { TASKS_EXTENSION }

/** What the legacy era declares (MCP 2025-11-25 `ServerCapabilities.tasks`): tools/call as tasks, list and cancel. */
export const LEGACY_TASKS_CAPABILITY = Object.freeze({ list: {}, cancel: {}, requests: { tools: { call: {} } } })

export { SERVER_TASKS_DEFAULTS, TOO_MANY_RUNNING_TASKS_ERROR_CODE, TooManyRunningTasksError }

/** A task running in this process. */
interface LiveTask {
  /** Its actor (a child of the tasks actor); set right after it is spawned. */
  ref: ActorRef<TaskLogicMessage<JsonObject>>
  /** The task as its latest `changed` event left it. */
  state: TaskState<JsonObject>
  context: TaskContext
  /** The store writes of its changes, in order. */
  written: Promise<unknown>
  owner: string
  /** The address key it counts against (anonymous callers), if any. */
  address: string | undefined
  /** Set once it stopped counting (ended, expired, or dropped with its session): writes stop too. */
  isGone: boolean
}

/** The owner prefix of tasks a legacy session owns (no principal, no `owner` option). */
const SESSION_OWNER = 'session:'

/** Whether a request may become a task, must, or may not. */
export type TaskSupport = 'forbidden' | 'optional' | 'required'

export class ServerTasks implements TasksCore {
  readonly #server: ServerCore
  readonly #live = new Map<string, LiveTask>()
  /** Running tasks here per owner, and per address key (only keys with some). */
  readonly #runningByOwner = new Map<string, number>()
  readonly #runningByAddress = new Map<string, number>()
  /** Slots taken by starts still waiting for the store (counted before the await, so a burst cannot pass the bound). */
  #starting = 0
  #store: TaskStore | undefined
  /** The tasks' clock and timers: `tasks.scheduler`, else the server's. */
  readonly #scheduler: SchedulerLike
  /** The parent of every task running here; spawned with the first. */
  #tasks: ActorRef<never> | undefined
  /** An actor system of the tasks' own, only when `tasks.scheduler` is not the server's (see ServerTaskOptions.scheduler). */
  #ownSystem: ActorSystem | undefined

  constructor(server: ServerCore, private readonly emit: (event: ServerEvent) => void) {
    this.#server = server
    this.#scheduler = server.options.tasks?.scheduler ?? server.options.scheduler ?? asyncScheduler
  }

  /**
   * The tasks actor: in `server.system`, so the task tree shows in `server.system.inspect`; in a
   * system of its own on `tasks.scheduler` when that is not the server's scheduler (so the TTL
   * timers run where the tasks' clock does).
   */
  get #parent(): ActorRef<never> {
    return this.#tasks ??= this.#system.spawn(tasksLogic, { id: 'tasks', systemId: 'tasks', onEvent: event => this.#taskFailed(event as TasksEvent) })
  }

  /** Where the tasks' actors run (see {@link #parent}). */
  get #system(): ActorSystem {
    const system = this.#server.system
    if (system.scheduler === this.#scheduler) return system
    return this.#ownSystem ??= createActorSystem({ name: system.name, scheduler: this.#scheduler, reportError: error => this.#server.report(error) })
  }

  /** A task's logic threw: report it, and free what it held (it runs no more). */
  #taskFailed(event: TasksEvent): void {
    this.#server.report(event.error)
    const live = this.#live.get(event.taskId)
    if (live !== undefined) {
      this.#forget(live)
      live.context.abort()
    }
  }

  /** The store: the one given, else a memory store made when first needed. */
  get store(): TaskStore {
    const options = this.#server.options.tasks ?? {}
    return this.#store ??= options.store ?? createMemoryTaskStore({
      defaultTtlMs: options.defaultTtlMs, maxTtlMs: options.maxTtlMs, pollIntervalMs: options.pollIntervalMs, scheduler: this.#scheduler,
      maxTasks: options.maxTasks, maxTasksPerOwner: options.maxTasksPerOwner, maxTasksPerAddress: options.maxTasksPerAddress,
    })
  }

  /** Tasks running in this process now (not the stored ones). */
  get liveCount(): number { return this.#live.size }

  /** Whether the server does tasks: asked to, or a tool may run as one (kept until the tools change). */
  get isEnabled(): boolean {
    return this.#isEnabled ??= this.#server.options.tasks?.enabled === true || [...this.#server.tools.values()].some(entry => {
      const support = entry.definition.execution?.taskSupport
      return support === 'optional' || support === 'required'
    })
  }
  #isEnabled: boolean | undefined

  /** The registries changed: whether tasks are on is read again when next asked. */
  changed(): void { this.#isEnabled = undefined }

  /**
   * Who owns the task `taskId` when `ctx`'s request creates or reads it. No request reads a task it
   * cannot prove it owns (MCP 2025-11-25 "Task Isolation and Access Control"; 2026-07-28 tasks
   * extension "Auth binding"):
   *
   * - the `owner` option, when it names one;
   * - an authenticated caller: its principal (`principal:<kind>:<id>`), from any session or exchange;
   * - a legacy session: the session (`session:<id>`), and its tasks end with it;
   * - an anonymous caller without a session (stateless legacy HTTP, the modern era): nothing but the
   *   task id, 128 random bits, proves anything, so each task is its own owner (`anonymous:<taskId>`)
   *   and whoever holds the id may read, update or cancel it; no list can be proved to be theirs.
   */
  ownerOf(ctx: ServerContext, taskId: string): string {
    return this.#requestor(ctx) ?? `anonymous:${taskId}`
  }

  /** The owner a requestor proves by who it is, or undefined when only a task's id can prove anything. */
  #requestor(ctx: ServerContext): string | undefined {
    const own = this.#server.options.tasks?.owner?.(ctx)
    if (own !== undefined) return own
    // An authenticated caller owns its tasks whatever session or exchange it uses next.
    if (ctx.principal !== undefined) return `principal:${principalKey(ctx.principal)}`
    // A request without a session (modern, or stateless legacy HTTP) has nothing to bind to.
    if (ctx.era === 'legacy' && ctx.session !== undefined) return `${SESSION_OWNER}${ctx.session.id}`
    return undefined
  }

  /**
   * Whether this request becomes a task: `true`, `false`, or the refusal the era requires for a
   * tool that must be one (legacy -32601, modern -32021) or must not (legacy -32601).
   */
  decide(support: TaskSupport, params: JsonObject | undefined, ctx: ServerContext): boolean {
    if (ctx.era === 'legacy') {
      const asked = isJsonObject(params?.task)
      // The common case first: a plain call of a tool that need not be a task.
      if (!asked && support !== 'required') return false
      // MCP 2025-11-25: a receiver without the tasks capability ignores the task metadata.
      if (!this.isEnabled) return false
      if (asked && support === 'forbidden') throw new MethodNotFoundError(`Method not found: tool ${JSON.stringify(params?.name)} cannot run as a task (execution.taskSupport is forbidden)`)
      if (!asked && support === 'required') throw new MethodNotFoundError(`Method not found: tool ${JSON.stringify(params?.name)} runs only as a task; send params.task`)
      return asked
    }
    if (support === 'forbidden') return false
    const declared = declaresExtension(ctx)
    if (!declared && support === 'required') {
      throw new MissingRequiredClientCapabilityError(`Missing required client capability: extension ${TASKS_EXTENSION} (tool ${JSON.stringify(params?.name)} runs only as a task)`,
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } })
    }
    // The server decides in the modern era: a task-capable tool runs as a task whenever the client can take one.
    return declared
  }

  /**
   * `ctx.runAsTask`: a task when the request may be one, else the work right here. Only a
   * tools/call may become one: it is the one request type the server declares tasks for (legacy
   * `tasks.requests.tools.call`; the extension's tasks answer tools/call), and MCP 2025-11-25 says a
   * receiver processes a request type it did not declare normally, ignoring its task metadata.
   */
  runAsTask<R extends JsonObject>(ctx: ServerContext, params: JsonObject | undefined, work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R> {
    if (ctx.method !== 'tools/call') return outcomePromise(work(ctx))
    if (ctx.era === 'legacy' ? !(this.isEnabled && isJsonObject(params?.task)) : !this.decide('optional', params, ctx)) return outcomePromise(work(ctx))
    return this.start(ctx, params, work as (ctx: ServerContext) => HandlerOutcome<JsonObject>) as Promise<R>
  }

  /**
   * Starts `work` as a task of the request `ctx` serves. Resolves with the era's CreateTaskResult
   * once the task is stored (legacy `{ task }`, modern the task itself with `resultType: 'task'`).
   */
  async start(ctx: ServerContext, params: JsonObject | undefined, work: (ctx: ServerContext) => HandlerOutcome<JsonObject>): Promise<JsonObject> {
    const requestor = this.#requestor(ctx)
    // An anonymous caller without a session owns the task by its id: the id is made here, so the owner can name it.
    const taskId = requestor === undefined ? randomTaskId() : undefined
    const owner = requestor ?? `anonymous:${taskId}`
    // Anonymous callers have no identity a quota could hold on to but where they come from.
    const address = ctx.principal === undefined ? clientAddressKey(ctx.requestInfo.remoteAddress) : undefined
    this.#reserve(owner, address)
    this.#starting++
    const requested = isJsonObject(params?.task) ? params!.task.ttl : undefined
    let stored: TaskState<JsonObject>
    try {
      stored = await this.store.create<JsonObject>({ owner, ttlMs: typeof requested === 'number' && requested >= 0 ? Math.floor(requested) : undefined, ...(taskId === undefined ? {} : { taskId }), ...(address === undefined ? {} : { address }) })
        .catch((error: unknown) => {
          // The store is full (for everyone, this owner, or this address): the call is refused, nothing runs.
          if (error instanceof TaskStoreFullError) throw new InternalError(`Internal error: ${error.message}; wait for tasks to finish or expire`, { limit: error.limit, scope: error.scope })
          throw error
        })
      if (taskId !== undefined && stored.taskId !== taskId) {
        // A store that chose its own id: the task would belong to no one who could reach it.
        await this.store.delete(stored.taskId, owner).catch(() => false)
        throw new Error('The task store ignored TaskCreate.taskId; it must use the id it is given')
      }
      if (ctx.session !== undefined && owner === `${SESSION_OWNER}${ctx.session.id}` && (ctx.session as SessionCore).connection.isClosed) {
        // The session ended while the task was being stored: its tasks went with it, so does this one.
        await this.store.delete(stored.taskId, owner).catch(() => false)
        throw new InternalError('Internal error: the session ended')
      }
    } catch (error) {
      this.#unreserve(owner, address)
      throw error
    } finally {
      this.#starting--
    }
    const sessionId = ctx.era === 'legacy' ? ctx.session?.id : undefined
    const context = new TaskContext(ctx, stored.taskId, this.#server.jsonSchema)
    const live: LiveTask = { ref: undefined!, state: stored, context, written: Promise.resolve(), owner, address, isGone: false }
    this.#live.set(stored.taskId, live)
    const input: TaskInput = { taskId: stored.taskId, owner, createdAt: stored.createdAt, ttlMs: stored.ttlMs, pollIntervalMs: stored.pollIntervalMs }
    if (stored.statusMessage !== undefined) input.statusMessage = stored.statusMessage
    live.ref = this.#system.spawn(TASK_LOGIC, { parent: this.#parent, id: stored.taskId, input, onEvent: event => this.#heard(live, event as TaskEvent<JsonObject>, sessionId) })
    // Legacy: a tool result with isError fails the task; the extension keeps `failed` for JSON-RPC errors.
    const isFailedResult = ctx.era === 'legacy' ? IS_ERROR_RESULT : undefined
    live.ref.send({ type: 'rxmcp.task.start', at: this.#scheduler.now(), work: runWork(work, context, this.#scheduler, isFailedResult) })
    return ctx.era === 'legacy' ? { task: taskToWire(stored) as unknown as JsonObject } : { ...taskToModernWire(stored, false), resultType: 'task' } as JsonObject
  }

  /** What a task's actor tells: each change is stored, then published; its end or expiry frees its slot. */
  #heard(live: LiveTask, event: TaskEvent<JsonObject>, sessionId: string | undefined): void {
    switch (event.type) {
      case 'changed': {
        const state = event.task
        live.state = state
        // Dropped with its session (or expired): the store no longer has it, and nobody may hear of it.
        if (live.isGone) return
        const wire = state.error instanceof Error ? { ...state, error: errorObject(state.error) } : state
        // Once its end is stored the task has nothing left here (its actor is done; the store keeps it
        // until its TTL): its slot is free before anyone hears of the end, so they may start another.
        const isEnd = isTerminalStatus(state.status)
        live.written = live.written
          .then(() => this.store.update(wire))
          .then(saved => {
            if (isEnd) this.#forget(live)
            this.emit({ type: 'task', task: saved, sessionId })
          }, error => {
            if (!live.isGone) this.#server.report(error)
            if (isEnd) this.#forget(live)
          })
        return
      }
      // Its TTL elapsed while it ran: the actor stops (and its work with it); the store deletes it on its own.
      case 'expired': return this.#forget(live)
      // A late message (the work ending after a cancel) is refused by design, not an error to report.
      case 'refused': return
    }
  }

  /**
   * Takes a running slot for a task of `owner` (and `address`), or throws -32603 naming the bound
   * it hit. The slot counts as starting (so a burst of starts cannot all pass the bound while the
   * store is asked) until the task is live; {@link #forget} or `unreserve` gives it back.
   */
  #reserve(owner: string, address: string | undefined): void {
    const options = this.#server.options.tasks ?? {}
    const defaults = SERVER_TASKS_DEFAULTS
    const maxRunning = options.maxRunningTasks ?? defaults.maxRunningTasks
    const maxPerOwner = options.maxRunningTasksPerOwner ?? defaults.maxRunningTasksPerOwner
    const maxPerAddress = options.maxRunningTasksPerAddress ?? defaults.maxRunningTasksPerAddress
    let refusal: TooManyRunningTasksError | undefined
    if (this.#live.size + this.#starting >= maxRunning) refusal = new TooManyRunningTasksError(maxRunning, 'process')
    else if ((this.#runningByOwner.get(owner) ?? 0) >= maxPerOwner) refusal = new TooManyRunningTasksError(maxPerOwner, 'owner')
    else if (address !== undefined && (this.#runningByAddress.get(address) ?? 0) >= maxPerAddress) refusal = new TooManyRunningTasksError(maxPerAddress, 'address')
    if (refusal !== undefined) throw new InternalError(`Internal error: ${refusal.message}; wait for tasks to finish`, { limit: refusal.limit, scope: `running-${refusal.scope}` })
    count(this.#runningByOwner, owner, 1)
    if (address !== undefined) count(this.#runningByAddress, address, 1)
  }

  /** Gives back the running slot of a task that did not start, or stopped running. */
  #unreserve(owner: string, address: string | undefined): void {
    count(this.#runningByOwner, owner, -1)
    if (address !== undefined) count(this.#runningByAddress, address, -1)
  }

  /** The task stopped running here (ended, expired, dropped): its slot is free; once only. */
  #forget(live: LiveTask): void {
    if (live.isGone) return
    live.isGone = true
    if (this.#live.get(live.ref.id) === live) this.#live.delete(live.ref.id)
    this.#unreserve(live.owner, live.address)
  }

  // ---- the task methods ----

  /** A task of the requestor's, or -32602 (another owner's task is not found either). */
  async #find(params: JsonObject | undefined, ctx: ServerContext): Promise<TaskState<JsonObject>> {
    if (!this.isEnabled) throw new MethodNotFoundError(`Method not found: ${ctx.method} (this server runs no tasks)`)
    if (ctx.era === 'modern' && !declaresExtension(ctx)) {
      throw new MissingRequiredClientCapabilityError(`Missing required client capability: extension ${TASKS_EXTENSION} (${ctx.method} is one of its methods)`,
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } })
    }
    const taskId = params?.taskId
    if (typeof taskId !== 'string') throw new InvalidParamsError('Invalid params: taskId must be a string')
    const task = await this.store.get<JsonObject>(taskId, this.ownerOf(ctx, taskId))
    if (task === undefined) throw new InvalidParamsError(`Invalid params: no task ${JSON.stringify(taskId)}`, { taskId })
    return task
  }

  async get(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    const task = await this.#find(params, ctx)
    return (ctx.era === 'legacy' ? taskToWire(task) : taskToModernWire(task, true)) as unknown as JsonObject
  }

  /** Legacy `tasks/result`: waits for the terminal state, then what the request would have answered. */
  async result(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    const task = await this.#find(params, ctx)
    if (isTerminalStatus(task.status)) return settledAnswer(task) as JsonObject
    return settledAnswer(await firstValueFrom(this.#settled(task, params, ctx))) as JsonObject
  }

  /**
   * The task's terminal state, once: from the event bus (`changes`), or from the store read again
   * right after listening (it may have ended between the first read and now) and every poll
   * interval (at least 1 s) on the tasks' scheduler, since a task whose instance is gone (a shared
   * store) ends without an event, failed by the store when it is read. Errors with the request's
   * abort reason when it is cancelled, and with -32602 when the task is gone (its TTL elapsed).
   * Ending in any way unsubscribes the bus, the poll and the abort listener.
   */
  #settled(task: TaskState<JsonObject>, params: JsonObject | undefined, ctx: ServerContext): Observable<TaskState<JsonObject>> {
    const taskId = task.taskId
    const changes = this.#server.events.pipe(
      filter((event): event is Extract<ServerEvent, { type: 'task' }> => event.type === 'task' && event.task.taskId === taskId),
      map(event => event.task as TaskState<JsonObject>),
    )
    const read = () => from(this.#find(params, ctx)).pipe(catchError((error: unknown) => {
      // A task that is gone ends the wait; a store that failed once is asked again at the next poll.
      if (error instanceof McpError) return throwError(() => error)
      this.#server.report(error)
      return EMPTY
    }))
    const period = Math.max(1000, task.pollIntervalMs)
    const polls = timer(period, period, this.#scheduler).pipe(mergeMap(read))
    return merge(changes, defer(read), polls).pipe(
      filter(state => isTerminalStatus(state.status)),
      take(1),
      untilAborted(ctx.signal),
    )
  }

  /**
   * Legacy `tasks/list`: the requestor's tasks. An anonymous caller without a session can prove it
   * owns no task but by its id, so its list is empty (MCP 2025-11-25: a receiver without a way to
   * bind tasks to a requestor must not list them; the 2026-07-28 extension drops the method).
   */
  async list(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    if (!this.isEnabled) throw new MethodNotFoundError('Method not found: tasks/list (this server runs no tasks)')
    const cursor = params?.cursor
    if (cursor !== undefined && typeof cursor !== 'string') throw new InvalidParamsError('Invalid params: cursor must be a string')
    const owner = this.#requestor(ctx)
    if (owner === undefined) {
      if (cursor !== undefined) throw new InvalidParamsError('Invalid params: unknown cursor')
      return { tasks: [] }
    }
    const page = await this.store.list(owner, cursor)
    return withCursor({ tasks: page.tasks.map(task => taskToWire(task) as unknown as JsonObject) }, page.nextCursor)
  }

  /**
   * `tasks/cancel`. Legacy: a terminal task is -32602, and the answer is the task, cancelled (it
   * is stored before the answer goes out). Modern: an acknowledgement.
   */
  async cancel(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    const task = await this.#find(params, ctx)
    if (isTerminalStatus(task.status)) {
      if (ctx.era === 'modern') return {}
      throw new InvalidParamsError(`Invalid params: task ${task.taskId} is already ${task.status}`, { taskId: task.taskId, status: task.status })
    }
    const live = this.#live.get(task.taskId)
    let cancelled: TaskState<JsonObject>
    if (live !== undefined) {
      live.ref.send({ type: 'cancel', at: this.#scheduler.now() })
      await live.written
      cancelled = (await this.store.get<JsonObject>(task.taskId, task.owner)) ?? live.state
    } else {
      // Its work ran elsewhere (another instance, before a restart): the stored state says cancelled.
      const now = this.#scheduler.now()
      cancelled = await this.store.update({ ...task, status: 'cancelled', lastUpdatedAt: now, statusMessage: 'Cancelled' })
      this.emit({ type: 'task', task: cancelled })
    }
    return ctx.era === 'legacy' ? taskToWire(cancelled) as unknown as JsonObject : {}
  }

  /** Modern `tasks/update`: answers to the task's input requests; an acknowledgement. */
  async update(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    const task = await this.#find(params, ctx)
    const responses = params?.inputResponses
    if (!isJsonObject(responses)) throw new InvalidParamsError('Invalid params: inputResponses must be an object of answers by key')
    if (!isTerminalStatus(task.status)) this.#live.get(task.taskId)?.context.answer(responses)
    return {}
  }

  /**
   * A legacy session ended (DELETE, idle expiry, eviction, the connection closed): the tasks it
   * owns (`session:<id>`, the default for an anonymous session) are stopped here and deleted from
   * the store, since nobody can reach them any more. Tasks of an authenticated principal, or of the
   * `owner` option's owner, outlive the session by design. A session handed over to another
   * instance (the Redis scale-out) has not ended: its tasks stay.
   */
  async sessionEnded(session: SessionCore): Promise<void> {
    if (session.isHandedOver) return
    const owner = `${SESSION_OWNER}${session.id}`
    // Bounded scan: at most maxRunningTasks run here. Stopping a task stops its work (and aborts its signal).
    for (const live of [...this.#live.values()]) {
      if (live.owner !== owner) continue
      this.#forget(live)
      live.ref.stop()
    }
    // Nothing can be stored for it when the server runs no tasks, or its memory store was never made.
    if (!this.isEnabled || (this.#store === undefined && this.#server.options.tasks?.store === undefined)) return
    // What else the store holds for it: finished tasks, and tasks of the session an instance that
    // is gone ran. Each round deletes what the first page shows, so the rounds end.
    for (let round = 0; round < 10_000; round++) {
      const page = await this.store.list(owner)
      if (page.tasks.length === 0) return
      const deleted = await Promise.all(page.tasks.map(task => this.store.delete(task.taskId, owner)))
      if (!deleted.some(Boolean)) return
    }
  }

  /** Ends every task running here (the server closes). */
  async close(): Promise<void> {
    for (const task of [...this.#live.values()]) this.#forget(task)
    // Stops every task (each after its work), in the order they started.
    this.#tasks?.stop()
    this.#tasks = undefined
    this.#ownSystem?.stop()
    await this.#store?.close()
  }
}

/** The task logic for JSON results. */
const TASK_LOGIC = taskLogic as unknown as ActorLogic<TaskActorState<JsonObject>, TaskLogicMessage<JsonObject>, TaskInput>

/** Whether the request's client declared the tasks extension (modern era: per request, in `_meta`). */
function declaresExtension(ctx: ServerContext): boolean {
  const extensions = ctx.clientCapabilities.extensions
  return isJsonObject(extensions) && isJsonObject(extensions[TASKS_EXTENSION])
}

/** What a failed task keeps of its error: the JSON-RPC error object (storable, and what tasks/result answers). */
function errorObject(error: Error): JsonObject {
  if (error instanceof McpError) return error.toJSON() as unknown as JsonObject
  return { code: -32603, message: error.message }
}
