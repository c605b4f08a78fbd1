import { Observable, Subscription, asyncScheduler, type SchedulerLike } from '../../lib/rx.ts'
import type { Task, TaskStatus } from '../../lib/schema/types.ts'
import { ErrorCode, InternalError, McpError, toModernWireError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { TASK_DEFAULTS, TaskTransitionError, canTransition, isTerminalStatus, type TaskState } from '../../lib/tasks/state.ts'
export { TASK_DEFAULTS, TASK_TRANSITION_ERROR_CODE, TERMINAL_STATUSES, TaskTransitionError, canTransition, isTerminalStatus, type TaskState } from '../../lib/tasks/state.ts'
import { createActor, withEffects, type ActorInspectionEvent, type ActorRef, type Step } from '../reducer-actor.ts'

/*
 * A task (MCP 2025-11-25 basic/utilities/tasks) as an actor: one mailbox and one state machine per
 * task, owning its TTL, its poll interval, its result or error and the subscription to its work.
 *
 *            ┌──────────── resume ────────────┐
 *            v                                │
 *   [*] ─> working ──── input-required ──> input_required
 *            │                                │
 *            └──── complete | fail | cancel ──┴──> completed | failed | cancelled  (terminal, final)
 *
 * `status` (a new status message) keeps the status and is legal in working and input_required.
 * Any message in a terminal state is refused: reported, never applied.
 */

/** What a task actor hears. */
export type TaskMessage<R = unknown> =
  /** A new status message, or (in input_required) the outstanding input requests now; the status stays. */
  | { type: 'status'; statusMessage?: string; inputRequests?: TaskState['inputRequests'] }
  /** working -> input_required: the receiver needs input from the requestor (what, when it travels in the task). */
  | { type: 'input-required'; statusMessage?: string; inputRequests?: TaskState['inputRequests'] }
  /** input_required -> working: the input arrived. */
  | { type: 'resume'; statusMessage?: string }
  /** -> completed, with the result. */
  | { type: 'complete'; result: R; statusMessage?: string }
  /** -> failed, with the error. */
  | { type: 'fail'; error: unknown; statusMessage?: string }
  /** -> failed, keeping a result that is itself a failure (a tool result with `isError: true`). */
  | { type: 'fail-with-result'; result: R; statusMessage?: string }
  /** -> cancelled; unsubscribes the work. */
  | { type: 'cancel'; statusMessage?: string }
  /** Subscribes the work (once). */
  | { type: 'run'; work: Observable<R> }

/** String code of {@link TaskExpiredError}. */
export const TASK_EXPIRED_ERROR_CODE = 'RXMCP_ERR_TASK_EXPIRED'

/** The task's TTL elapsed before what was waited for happened. */
export class TaskExpiredError extends Error {
  override name = 'TaskExpiredError'
  readonly code = TASK_EXPIRED_ERROR_CODE
  constructor(readonly taskId: string, options?: { cause?: unknown }) { super(`Task ${taskId} has expired`, options) }
}

/** The status a message leads to (the current one for `status` and `run`). */
function targetOf(state: TaskState<unknown>, message: TaskMessage<unknown>): TaskStatus {
  switch (message.type) {
    case 'status': case 'run': return state.status
    case 'input-required': return 'input_required'
    case 'resume': return 'working'
    case 'complete': return 'completed'
    case 'fail': case 'fail-with-result': return 'failed'
    case 'cancel': return 'cancelled'
  }
}

/**
 * One pure step of a task: the next state, or a {@link TaskTransitionError} when the message is
 * refused. `run` is not stepped here (it only starts the work); it is legal while not terminal.
 * `resume` in working, and `input-required` in input_required without input requests, are
 * refused: they change nothing.
 */
export function stepTask<R>(state: TaskState<R>, message: TaskMessage<R>, now: number): TaskState<R> | TaskTransitionError {
  const to = targetOf(state, message)
  // input-required again with the input requests now outstanding updates them (more asked, some answered).
  const isUpdate = message.type === 'status' || message.type === 'run' || (message.type === 'input-required' && message.inputRequests !== undefined)
  const isSelf = to === state.status && !isUpdate
  if (!canTransition(state.status, to) || isSelf) return new TaskTransitionError(state.taskId, state.status, message.type)
  if (message.type === 'run') return state
  const next: TaskState<R> = { ...state, status: to, lastUpdatedAt: now }
  if (message.statusMessage !== undefined) next.statusMessage = message.statusMessage
  else if (to !== state.status) delete next.statusMessage
  if ((message.type === 'input-required' || message.type === 'status') && message.inputRequests !== undefined) next.inputRequests = message.inputRequests
  else if (to !== 'input_required') delete next.inputRequests
  if (message.type === 'complete' || message.type === 'fail-with-result') next.result = message.result
  if (message.type === 'fail') {
    next.error = message.error
    if (message.statusMessage === undefined) next.statusMessage = describeError(message.error)
  }
  return next
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string' ? (error as { message: string }).message : String(error)
}

/** The wire form of a task state (MCP 2025-11-25 `Task`): ISO 8601 times, `ttl` and `pollInterval` in ms. */
export function taskToWire(state: TaskState<unknown>): Task {
  const task: Task = {
    taskId: state.taskId,
    status: state.status,
    createdAt: new Date(state.createdAt).toISOString(),
    lastUpdatedAt: new Date(state.lastUpdatedAt).toISOString(),
    ttl: state.ttlMs,
    pollInterval: state.pollIntervalMs,
  }
  if (state.statusMessage !== undefined) task.statusMessage = state.statusMessage
  return task
}

/**
 * The wire form of a task in the MCP 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`):
 * `ttlMs` and `pollIntervalMs`, and as a DetailedTask (tasks/get, notifications/tasks) what its
 * status carries inline: the result once completed (a failed tool result too: the extension
 * reserves `failed` for JSON-RPC errors), the error once failed, the input requests while
 * input_required.
 */
export function taskToModernWire(state: TaskState<unknown>, isDetailed: boolean): Record<string, unknown> {
  const task: Record<string, unknown> = {
    taskId: state.taskId,
    status: state.status === 'failed' && state.error === undefined ? 'completed' : state.status,
    createdAt: new Date(state.createdAt).toISOString(),
    lastUpdatedAt: new Date(state.lastUpdatedAt).toISOString(),
    ttlMs: state.ttlMs,
    pollIntervalMs: state.pollIntervalMs,
  }
  if (state.statusMessage !== undefined) task.statusMessage = state.statusMessage
  if (!isDetailed) return task
  if (state.result !== undefined && (state.status === 'completed' || state.status === 'failed')) task.result = state.result
  if (state.error !== undefined && state.status === 'failed') task.error = modernTaskError(state.error)
  if (state.status === 'input_required') task.inputRequests = state.inputRequests ?? {}
  return task
}

/**
 * A failed task's error as the modern era may carry it (MCP 2026-07-28: never -32002 or -32042;
 * see `toModernWireError`): the stored error (an McpError, or its JSON-RPC object once stored)
 * as it is unless it has one of those codes.
 */
function modernTaskError(error: unknown): unknown {
  if (error instanceof McpError) return toModernWireError(error)
  if (isJsonObject(error) && (error.code === ErrorCode.ResourceNotFound || error.code === ErrorCode.UrlElicitationRequired) && typeof error.message === 'string') {
    return toModernWireError(McpError.from(error as { code: number; message: string; data?: unknown })).toJSON()
  }
  return error
}

/** `_meta` key tying a message to its task (MCP 2025-11-25). */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task'

/** `value` with the related-task `_meta` of `taskId` added to its own `_meta`. */
export function withRelatedTask<T extends Record<string, unknown>>(value: T, taskId: string): T & { _meta: Record<string, unknown> } {
  const meta = isJsonObject(value._meta) ? value._meta : undefined
  return { ...value, _meta: { ...meta, [RELATED_TASK_META]: { taskId } } }
}

/**
 * What `tasks/result` answers for a settled task (MCP 2025-11-25): what the request would have
 * answered, the result with the related-task `_meta`, or (thrown) the error it ended with, a
 * stored JSON-RPC error object or the Error itself; a cancelled task is -32603.
 */
export function settledAnswer(state: TaskState<Record<string, unknown>>): Record<string, unknown> {
  const error = state.error
  if (error !== undefined) {
    if (error instanceof McpError) throw error
    if (isJsonObject(error) && typeof error.code === 'number' && typeof error.message === 'string') throw McpError.from(error as { code: number; message: string })
    throw new InternalError(error instanceof Error ? error.message : String(error), { [RELATED_TASK_META]: { taskId: state.taskId } })
  }
  if (state.status === 'cancelled') throw new InternalError(`Task ${state.taskId} was cancelled`, { [RELATED_TASK_META]: { taskId: state.taskId } })
  return withRelatedTask(state.result ?? {}, state.taskId)
}

/** Options of {@link createTask}. */
export interface TaskOptions<R> {
  taskId: string
  owner: string
  /** Retention from creation in ms; `null` never expires. Default {@link TASK_DEFAULTS}.ttlMs. */
  ttlMs?: number | null
  pollIntervalMs?: number
  /** Creation time in epoch ms (a task rebuilt from a store keeps its own); default the scheduler's now. */
  createdAt?: number
  statusMessage?: string
  /** The handler's work. Its last value is the result when it completes; its error fails the task. */
  work?: Observable<R>
  /** Whether a result is itself a failure (for tools/call: `isError: true`), so the task ends failed keeping it. */
  isFailedResult?: (result: R) => boolean
  /** The clock and the timer of the TTL; default `asyncScheduler`. */
  scheduler?: SchedulerLike
  /** Gets every refused message as a {@link TaskTransitionError}, and errors thrown in the actor. */
  reportError?: (error: unknown) => void
  /** Runs once when the TTL elapses, after the task stopped. */
  onExpire?: (state: TaskState<R>) => void
  inspect?: (event: ActorInspectionEvent<TaskState<R>, TaskMessage<R>>) => void
}

/** A running task. */
export interface TaskRef<R = unknown> extends AsyncDisposable {
  readonly taskId: string
  readonly owner: string
  /** The current state. */
  readonly state: TaskState<R>
  /**
   * The state now and after every change (status or status message); completes when the task
   * expires or is disposed. The protocol layer maps it to `notifications/tasks/status`.
   */
  readonly states: Observable<TaskState<R>>
  /**
   * The terminal state once reached (at once if already there), then completes: what `tasks/result`
   * waits for. Errors with {@link TaskExpiredError} if the task expires or is disposed first.
   */
  readonly settled: Observable<TaskState<R>>
  readonly isExpired: boolean
  /** Queues a message; a refused one goes to `reportError` and leaves the state as it was. */
  send(message: TaskMessage<R>): void
  /** The wire form of the current state. */
  toWire(): Task
  /** Ends the task now as if its TTL elapsed: unsubscribes the work, completes `states`. */
  expire(): void
}

/**
 * Starts a task actor in `working` (MCP 2025-11-25: tasks MUST begin in working), subscribes its
 * work if given, and schedules its expiry `ttlMs` after creation.
 *
 * Unsubscribing from `states` or `settled` never cancels the task; `cancel` does, and so does expiry.
 * @example
 * const task = createTask({ taskId, owner: session.id, work: callTool(params) })
 * task.settled.subscribe(state => console.log(state.status, state.result))
 * task.send({ type: 'cancel' })
 * @see createMemoryTaskStore
 */
export function createTask<R>(options: TaskOptions<R>): TaskRef<R> {
  return new TaskActor(options)
}

class TaskActor<R> implements TaskRef<R> {
  readonly taskId: string
  readonly owner: string
  readonly #options: TaskOptions<R>
  readonly #scheduler: SchedulerLike
  readonly #actor: ActorRef<TaskState<R>, TaskMessage<R>>
  /** The subscription to the work; closed on a terminal state and on expiry. */
  #work: Subscription | undefined
  /** The pending expiry timer. */
  #expiry: Subscription | undefined
  #isExpired = false

  constructor(options: TaskOptions<R>) {
    this.#options = options
    this.taskId = options.taskId
    this.owner = options.owner
    this.#scheduler = options.scheduler ?? asyncScheduler
    const now = this.#scheduler.now()
    const createdAt = options.createdAt ?? now
    const initial: TaskState<R> = {
      taskId: options.taskId,
      owner: options.owner,
      status: 'working',
      createdAt,
      lastUpdatedAt: createdAt,
      ttlMs: options.ttlMs === undefined ? TASK_DEFAULTS.ttlMs : options.ttlMs,
      pollIntervalMs: options.pollIntervalMs ?? TASK_DEFAULTS.pollIntervalMs,
    }
    if (options.statusMessage !== undefined) initial.statusMessage = options.statusMessage
    this.#actor = createActor<TaskState<R>, TaskMessage<R>>(initial, (state, message) => this.#behaviour(state, message), {
      name: `task:${options.taskId}`,
      reportError: options.reportError,
      inspect: options.inspect,
    })
    // MCP 2025-11-25: ttl is "time in milliseconds from creation before task may be deleted".
    if (initial.ttlMs !== null) {
      this.#expiry = this.#scheduler.schedule(() => this.expire(), Math.max(0, createdAt + initial.ttlMs - now))
    }
    if (options.work !== undefined) this.send({ type: 'run', work: options.work })
  }

  #behaviour(state: TaskState<R>, message: TaskMessage<R>): Step<TaskState<R>> {
    if (message.type === 'run' && this.#work !== undefined && !isTerminalStatus(state.status)) {
      return withEffects(state, [() => this.#options.reportError?.(new TaskTransitionError(state.taskId, state.status, 'run'))])
    }
    const next = stepTask(state, message, this.#scheduler.now())
    if (next instanceof TaskTransitionError) return withEffects(state, [() => this.#options.reportError?.(next)])
    if (message.type === 'run') return withEffects(state, [() => this.#subscribe(message.work)])
    // The work is done or abandoned once terminal: cancel unsubscribes it (MCP: a cancelled task
    // MUST remain cancelled even if execution continues), and a result sent from outside ends it too.
    if (isTerminalStatus(next.status)) return withEffects(next, [() => this.#unsubscribeWork()])
    return next
  }

  #subscribe(work: Observable<R>): void {
    // The work's latest value, the result if it completes now.
    let last: { value: R } | undefined
    const subscription = new Subscription()
    this.#work = subscription
    subscription.add(work.subscribe({
      next: value => { last = { value } },
      error: error => this.send({ type: 'fail', error }),
      complete: () => {
        if (last === undefined) this.send({ type: 'fail', error: new Error('The task\'s work completed without a result') })
        else if (this.#options.isFailedResult?.(last.value)) this.send({ type: 'fail-with-result', result: last.value })
        else this.send({ type: 'complete', result: last.value })
      },
    }))
  }

  #unsubscribeWork(): void {
    this.#work?.unsubscribe()
  }

  get state(): TaskState<R> { return this.#actor.state }
  get states(): Observable<TaskState<R>> { return this.#actor.states }
  get isExpired(): boolean { return this.#isExpired }

  get settled(): Observable<TaskState<R>> {
    return new Observable<TaskState<R>>(subscriber => {
      if (this.#isExpired && !isTerminalStatus(this.state.status)) {
        subscriber.error(new TaskExpiredError(this.taskId))
        return
      }
      return this.#actor.states.subscribe({
        next: state => {
          if (!isTerminalStatus(state.status)) return
          subscriber.next(state)
          subscriber.complete()
        },
        complete: () => subscriber.error(new TaskExpiredError(this.taskId)),
      })
    })
  }

  send(message: TaskMessage<R>): void { this.#actor.send(message) }

  toWire(): Task { return taskToWire(this.state) }

  expire(): void {
    if (this.#isExpired) return
    this.#isExpired = true
    this.#expiry?.unsubscribe()
    this.#unsubscribeWork()
    void this.#actor.stop()
    try { this.#options.onExpire?.(this.state) } catch (error) { this.#options.reportError?.(error) }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#expiry?.unsubscribe()
    this.#unsubscribeWork()
    this.#isExpired = true
    await this.#actor.stop()
  }
}
