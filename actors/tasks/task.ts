import { BehaviorSubject, Observable, asyncScheduler, type SchedulerLike, type Subscription } from '../../lib/rx.ts'
import type { Task } from '../../lib/schema/types.ts'
import { ErrorCode, InternalError, McpError, toModernWireError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { TASK_DEFAULTS, TaskTransitionError, isTerminalStatus, type TaskState } from '../../lib/tasks/state.ts'
import { createActorSystem, type ActorInspectionEvent, type ActorLogic, type ActorRef } from '../actor.ts'
import { initialTask, stepTask, taskLogic, taskWork, type TaskActorState, type TaskEvent, type TaskInput, type TaskLogicMessage, type TaskMessage } from './task-logic.ts'
export { TASK_DEFAULTS, TASK_TRANSITION_ERROR_CODE, TERMINAL_STATUSES, TaskTransitionError, canTransition, isTerminalStatus, type TaskState } from '../../lib/tasks/state.ts'
export {
  TASK_WORK, initialTask, stepTask, taskLogic, taskWork, tasksLogic,
  type TaskActorState, type TaskEvent, type TaskInput, type TaskLogicMessage, type TaskMessage, type TaskWorkMessage, type TasksEvent, type Timed,
} from './task-logic.ts'

/*
 * A task's wire forms and answers (both eras), and `createTask`: one task as a lone actor (its
 * logic in task-logic.ts) for a caller without an actor system of its own (the client running the
 * server's requests as tasks). The server spawns the same logic under its tasks actor
 * (actors/server/tasks.ts).
 */

/** String code of {@link TaskExpiredError}. */
export const TASK_EXPIRED_ERROR_CODE = 'RXMCP_ERR_TASK_EXPIRED'

/** The task's TTL elapsed before what was waited for happened. */
export class TaskExpiredError extends Error {
  override name = 'TaskExpiredError'
  readonly code = TASK_EXPIRED_ERROR_CODE
  constructor(readonly taskId: string, options?: { cause?: unknown }) { super(`Task ${taskId} has expired`, options) }
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
  /** The clock, the TTL timer and the retention of the result; default `asyncScheduler`. */
  scheduler?: SchedulerLike
  /** Gets every refused message as a {@link TaskTransitionError}, and errors thrown in the actor. */
  reportError?: (error: unknown) => void
  /** Runs once when the TTL elapses, after the task stopped. */
  onExpire?: (state: TaskState<R>) => void
  /** The inspection events of the task's actor system (the task and its work child). */
  inspect?: (event: ActorInspectionEvent) => void
}

/** A running task. */
export interface TaskRef<R = unknown> extends AsyncDisposable {
  readonly taskId: string
  readonly owner: string
  /** The task as its latest change left it (the owner's copy, from the actor's events). */
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
  /** Ends the task now as if its TTL elapsed: stops the work, completes `states`. */
  expire(): void
}

/**
 * Starts a task in `working` (MCP 2025-11-25: tasks MUST begin in working) as the root actor of an
 * actor system of its own (see {@link taskLogic}), runs its work if given, and expires it `ttlMs`
 * after creation (a TTL timer in the actor while it runs; a finished task's result is kept here
 * until then, on the scheduler).
 *
 * Unsubscribing from `states` or `settled` never cancels the task; `cancel` does, and so does expiry.
 * @example
 * const task = createTask({ taskId, owner: session.id, work: callTool(params) })
 * task.settled.subscribe(state => console.log(state.status, state.result))
 * task.send({ type: 'cancel' })
 * @see createMemoryTaskStore
 */
export function createTask<R>(options: TaskOptions<R>): TaskRef<R> {
  return new LoneTask(options)
}

class LoneTask<R> implements TaskRef<R> {
  readonly taskId: string
  readonly owner: string
  readonly #options: TaskOptions<R>
  readonly #scheduler: SchedulerLike
  readonly #actor: ActorRef<TaskLogicMessage<R>, TaskActorState<R>>
  /** The task as the actor's latest `changed` event left it; completes on expiry and disposal. */
  readonly #states: BehaviorSubject<TaskState<R>>
  /** Once the task ended: the retention timer, `ttlMs` after creation. */
  #retention: Subscription | undefined
  /** The inspection subscription, when asked for. */
  #inspection: Subscription | undefined
  #isExpired = false

  constructor(options: TaskOptions<R>) {
    this.#options = options
    this.taskId = options.taskId
    this.owner = options.owner
    const scheduler = this.#scheduler = options.scheduler ?? asyncScheduler
    const now = scheduler.now()
    const input: TaskInput = {
      taskId: options.taskId,
      owner: options.owner,
      createdAt: options.createdAt ?? now,
      ttlMs: options.ttlMs === undefined ? TASK_DEFAULTS.ttlMs : options.ttlMs,
      pollIntervalMs: options.pollIntervalMs ?? TASK_DEFAULTS.pollIntervalMs,
    }
    if (options.statusMessage !== undefined) input.statusMessage = options.statusMessage
    this.#states = new BehaviorSubject(initialTask<R>(input))
    const system = createActorSystem({ name: 'task', scheduler, reportError: error => options.reportError?.(error) })
    if (options.inspect !== undefined) this.#inspection = system.inspect.subscribe(options.inspect)
    this.#actor = system.spawn(taskLogic as unknown as ActorLogic<TaskActorState<R>, TaskLogicMessage<R>, TaskInput>, { id: options.taskId, input, onEvent: event => this.#heard(event as TaskEvent<R>) })
    const work = options.work === undefined ? undefined : taskWork(options.work, () => scheduler.now(), options.isFailedResult)
    this.#actor.send({ type: 'rxmcp.task.start', at: now, work })
  }

  /** What the actor emits: each change, refusals, its expiry. */
  #heard(event: TaskEvent<R>): void {
    switch (event.type) {
      case 'changed': {
        this.#states.next(event.task)
        const { ttlMs, createdAt } = event.task
        // The actor is done once terminal: the result is kept here until the TTL from creation.
        if (isTerminalStatus(event.task.status) && ttlMs !== null) {
          this.#retention = this.#scheduler.schedule(() => this.expire(), Math.max(0, createdAt + ttlMs - this.#scheduler.now()))
        }
        return
      }
      case 'refused': return this.#options.reportError?.(event.error)
      case 'expired': return this.#expired(event.task)
    }
  }

  get state(): TaskState<R> { return this.#states.value }
  get states(): Observable<TaskState<R>> { return this.#states.asObservable() }
  get isExpired(): boolean { return this.#isExpired }

  get settled(): Observable<TaskState<R>> {
    return new Observable<TaskState<R>>(subscriber => {
      if (this.#isExpired && !isTerminalStatus(this.state.status)) {
        subscriber.error(new TaskExpiredError(this.taskId))
        return
      }
      return this.#states.subscribe({
        next: state => {
          if (!isTerminalStatus(state.status)) return
          subscriber.next(state)
          subscriber.complete()
        },
        complete: () => subscriber.error(new TaskExpiredError(this.taskId)),
      })
    })
  }

  send(message: TaskMessage<R>): void {
    if (this.#isExpired) return
    const at = this.#scheduler.now()
    if (isTerminalStatus(this.state.status)) {
      // The actor is done: what it would have refused is refused here, from its final state.
      const refused = stepTask(this.state, message, at)
      if (refused instanceof TaskTransitionError) this.#options.reportError?.(refused)
      return
    }
    if (message.type === 'run') this.#actor.send({ type: 'run', at, work: taskWork(message.work, () => this.#scheduler.now(), this.#options.isFailedResult) })
    else this.#actor.send({ ...message, at })
  }

  toWire(): Task { return taskToWire(this.state) }

  expire(): void {
    if (this.#isExpired) return
    // A running task ends by its own expiry message (its `expired` event comes back here); a finished one is let go.
    if (!isTerminalStatus(this.state.status)) this.#actor.send({ type: 'rxmcp.task.expire' })
    else this.#expired(this.state)
  }

  #expired(state: TaskState<R>): void {
    if (this.#isExpired) return
    this.#isExpired = true
    this.#retention?.unsubscribe()
    this.#actor.stop()
    this.#states.complete()
    this.#inspection?.unsubscribe()
    try { this.#options.onExpire?.(state) } catch (error) { this.#options.reportError?.(error) }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#isExpired = true
    this.#retention?.unsubscribe()
    this.#actor.stop()
    this.#states.complete()
    this.#inspection?.unsubscribe()
  }
}
