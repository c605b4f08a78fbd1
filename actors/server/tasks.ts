/**
 * A server's tasks, both eras: when a request becomes a task, the task actors running in this
 * process, and the task methods. A task lives in the server, not in a connection: its state is
 * kept in the {@link TaskStore} (written before the CreateTaskResult goes out, and after every
 * change), so a client may drop, reconnect and poll. Each change, once stored, goes on the
 * server's event bus, which sessions turn into `notifications/tasks/status` (legacy) and listen
 * streams into `notifications/tasks` (modern).
 */
import { principalKey } from '../../lib/auth.ts'
import { Observable, filter, firstValueFrom, isObservable, type SchedulerLike } from '../../lib/rx.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InternalError, InvalidParamsError, McpError, MethodNotFoundError, MissingRequiredClientCapabilityError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import type { ServerContext, ServerEvent } from '../server.ts'
import { isPromiseLike, outcomePromise, type HandlerOutcome } from '../request.ts'
import { TaskStoreFullError, createMemoryTaskStore, type TaskStore } from '../tasks/store.ts'
import { TaskTransitionError, createTask, isTerminalStatus, settledAnswer, taskToModernWire, taskToWire, type TaskRef, type TaskState } from '../tasks/task.ts'
import { TaskContext } from './task-context.ts'
import { withCursor } from '../../lib/cursor.ts'
import type { Server } from './server.ts'
import type { Session } from './session.ts'

/** The identifier of the MCP 2026-07-28 tasks extension. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** What the legacy era declares (MCP 2025-11-25 `ServerCapabilities.tasks`): tools/call as tasks, list and cancel. */
export const LEGACY_TASKS_CAPABILITY = Object.freeze({ list: {}, cancel: {}, requests: { tools: { call: {} } } })

/** A task running in this process. */
interface LiveTask {
  ref: TaskRef<JsonObject>
  context: TaskContext
  /** The store writes of its changes, in order. */
  written: Promise<unknown>
}

/** Whether a request may become a task, must, or may not. */
export type TaskSupport = 'forbidden' | 'optional' | 'required'

export class ServerTasks {
  readonly #server: Server
  readonly #live = new Map<string, LiveTask>()
  #store: TaskStore | undefined
  readonly #scheduler: SchedulerLike | undefined

  constructor(server: Server, private readonly emit: (event: ServerEvent) => void) {
    this.#server = server
    this.#scheduler = server.options.tasks?.scheduler
  }

  /** The store: the one given, else a memory store made when first needed. */
  get store(): TaskStore {
    const options = this.#server.options.tasks ?? {}
    return this.#store ??= options.store ?? createMemoryTaskStore({
      defaultTtlMs: options.defaultTtlMs, maxTtlMs: options.maxTtlMs, pollIntervalMs: options.pollIntervalMs, scheduler: this.#scheduler,
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

  /** Who owns the tasks `ctx`'s request creates or reads. */
  ownerOf(ctx: ServerContext): string {
    const own = this.#server.options.tasks?.owner
    if (own !== undefined) return own(ctx)
    // An authenticated caller owns its tasks whatever session or exchange it uses next.
    if (ctx.principal !== undefined) return `principal:${principalKey(ctx.principal)}`
    // A stateless exchange (modern, or legacy HTTP without sessions) has no session to bind to.
    return ctx.era === 'legacy' && (ctx.session as Session).connection.transport.isStateless !== true ? ctx.session.id : ''
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

  /** `ctx.runAsTask`: a task when the request may be one, else the work right here. */
  runAsTask<R extends JsonObject>(ctx: ServerContext, params: JsonObject | undefined, work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R> {
    if (ctx.era === 'legacy' ? !(this.isEnabled && isJsonObject(params?.task)) : !this.decide('optional', params, ctx)) return outcomePromise(work(ctx))
    return this.start(ctx, params, work as (ctx: ServerContext) => HandlerOutcome<JsonObject>) as Promise<R>
  }

  /**
   * Starts `work` as a task of the request `ctx` serves. Resolves with the era's CreateTaskResult
   * once the task is stored (legacy `{ task }`, modern the task itself with `resultType: 'task'`).
   */
  async start(ctx: ServerContext, params: JsonObject | undefined, work: (ctx: ServerContext) => HandlerOutcome<JsonObject>): Promise<JsonObject> {
    const owner = this.ownerOf(ctx)
    const requested = isJsonObject(params?.task) ? params!.task.ttl : undefined
    const stored = await this.store.create({ owner, ttlMs: typeof requested === 'number' && requested >= 0 ? Math.floor(requested) : undefined }).catch((error: unknown) => {
      // The store is full (for everyone, or for this owner): the call is refused, nothing runs.
      if (error instanceof TaskStoreFullError) throw new InternalError(`Internal error: ${error.message}; wait for tasks to finish or expire`, { limit: error.limit, scope: error.scope })
      throw error
    })
    const sessionId = ctx.era === 'legacy' ? ctx.session.id : undefined
    const ref = createTask<JsonObject>({
      taskId: stored.taskId, owner, createdAt: stored.createdAt, ttlMs: stored.ttlMs, pollIntervalMs: stored.pollIntervalMs,
      scheduler: this.#scheduler,
      // Legacy: a tool result with isError fails the task; the extension keeps `failed` for JSON-RPC errors.
      isFailedResult: ctx.era === 'legacy' ? result => result.isError === true : undefined,
      // A late message (the work ending after a cancel) is refused by design, not an error to report.
      reportError: error => { if (!(error instanceof TaskTransitionError)) this.#server.report(error) },
      onExpire: () => { this.#live.delete(stored.taskId) },
    })
    const context = new TaskContext(ctx, ref)
    const live: LiveTask = { ref, context, written: Promise.resolve() }
    this.#live.set(ref.taskId, live)
    let isFirst = true
    ref.states.subscribe({
      next: state => {
        // The first is the state the store was created with.
        if (isFirst) { isFirst = false; return }
        const wire = state.error instanceof Error ? { ...state, error: errorObject(state.error) } : state
        live.written = live.written
          .then(() => this.store.update(wire))
          .then(saved => this.emit({ type: 'task', task: saved, sessionId }), error => this.#server.report(error))
        if (isTerminalStatus(state.status)) {
          context.abort()
          // Once its end is stored the actor has nothing left to do: the store keeps the task until its TTL.
          void live.written.then(() => {
            if (this.#live.get(ref.taskId) === live) this.#live.delete(ref.taskId)
            return ref[Symbol.asyncDispose]()
          })
        }
      },
      complete: () => context.abort(),
    })
    ref.send({ type: 'run', work: runWork(work, context) })
    return ctx.era === 'legacy' ? { task: taskToWire(stored) as unknown as JsonObject } : { ...taskToModernWire(stored, false), resultType: 'task' } as JsonObject
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
    const task = await this.store.get<JsonObject>(taskId, this.ownerOf(ctx))
    if (task === undefined) throw new InvalidParamsError(`Invalid params: no task ${JSON.stringify(taskId)}`, { taskId })
    return task
  }

  async get(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    const task = await this.#find(params, ctx)
    return (ctx.era === 'legacy' ? taskToWire(task) : taskToModernWire(task, true)) as unknown as JsonObject
  }

  /** Legacy `tasks/result`: waits for the terminal state, then what the request would have answered. */
  async result(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    let task = await this.#find(params, ctx)
    if (!isTerminalStatus(task.status)) {
      const events = this.#server.events.pipe(filter(event => event.type === 'task' && event.task.taskId === task.taskId && isTerminalStatus(event.task.status)))
      const ended = firstValueFrom(events)
      const aborted = new Promise<never>((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }))
      // Read again after listening: the task may have ended between the first read and now.
      const now = await this.#find(params, ctx)
      // The store is read again now and then too: a task whose instance is gone (a shared store)
      // ends without an event, failed by the store when it is read.
      let timeout: ReturnType<typeof setTimeout> | undefined
      const delay = Math.max(1000, now.pollIntervalMs)
      const reread = new Promise<{ task: TaskState<JsonObject> }>(resolve => {
        const check = () => void this.#find(params, ctx).then(state => {
          if (isTerminalStatus(state.status)) resolve({ task: state })
          else if (timeout !== undefined) timeout = setTimeout(check, delay)
        }, () => {})
        timeout = setTimeout(check, delay)
      })
      try {
        task = isTerminalStatus(now.status) ? now : ((await Promise.race([ended, aborted, reread])) as { task: TaskState<JsonObject> }).task
      } finally {
        clearTimeout(timeout)
        timeout = undefined
      }
    }
    return settledAnswer(task) as JsonObject
  }

  async list(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject> {
    if (!this.isEnabled) throw new MethodNotFoundError('Method not found: tasks/list (this server runs no tasks)')
    const cursor = params?.cursor
    if (cursor !== undefined && typeof cursor !== 'string') throw new InvalidParamsError('Invalid params: cursor must be a string')
    const page = await this.store.list(this.ownerOf(ctx), cursor)
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
      live.ref.send({ type: 'cancel' })
      await live.written
      cancelled = (await this.store.get<JsonObject>(task.taskId, task.owner)) ?? live.ref.state
    } else {
      // Its work ran elsewhere (another instance, before a restart): the stored state says cancelled.
      const now = Date.now()
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

  /** Ends every task running here (the server closes). */
  async close(): Promise<void> {
    const live = [...this.#live.values()]
    this.#live.clear()
    await Promise.all(live.map(task => task.ref[Symbol.asyncDispose]()))
    await this.#store?.close()
  }
}

/** The handler's work as the Observable a task actor subscribes: cancel and expiry unsubscribe it and abort the signal. */
function runWork(work: (ctx: ServerContext) => HandlerOutcome<JsonObject>, context: TaskContext): Observable<JsonObject> {
  return new Observable<JsonObject>(subscriber => {
    let outcome: HandlerOutcome<JsonObject>
    try {
      outcome = work(context)
    } catch (error) {
      subscriber.error(error)
      return
    }
    if (isObservable(outcome)) {
      const subscription = outcome.subscribe(subscriber)
      return () => { subscription.unsubscribe(); context.abort() }
    }
    if (isPromiseLike(outcome)) {
      Promise.resolve(outcome).then(value => { subscriber.next(value); subscriber.complete() }, error => subscriber.error(error))
    } else {
      subscriber.next(outcome)
      subscriber.complete()
    }
    return () => context.abort()
  })
}

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
