import { Observable } from '../../lib/rx.ts'
import type { TaskStatus } from '../../lib/schema/types.ts'
import { TaskTransitionError, canTransition, type TaskState } from '../../lib/tasks/state.ts'
import { NONE, effect, fromObservable, type ActorLogic, type ChildMessage, type Effect, type Step } from '../actor.ts'

/*
 * A task (MCP 2025-11-25 basic/utilities/tasks) as actor logic: a pure transition over its state,
 * its TTL a timer effect, its work a child actor that owns the work's Observable.
 *
 *            ┌──────────── resume ────────────┐
 *            v                                │
 *   [*] ─> working ──── input-required ──> input_required
 *            │                                │
 *            └──── complete | fail | cancel ──┴──> completed | failed | cancelled  (terminal: actor done)
 *
 * `status` (a new status message) keeps the status and is legal in working and input_required.
 * A message the machine forbids is refused (the `refused` event), never applied.
 *
 * As an actor (status union of lib/actor): working and input_required are `active`; a terminal
 * task is `done`, its output the final task state; a task whose TTL elapsed first is `stopped`
 * (after its `expired` event). Time comes in messages (`at`, epoch ms) and from the input (the
 * creation time); the logic never reads a clock.
 *
 *   task ──spawn──> work (fromObservable): the work's messages come to the task; stopping the
 *                   work child unsubscribes the work (cancel, expiry, any terminal state).
 */

/** What a task hears from whoever drives it (its owner, its work). */
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
  /** -> cancelled; stops the work. */
  | { type: 'cancel'; statusMessage?: string }
  /** Runs the work (once): its last value is the result when it completes, its error fails the task. */
  | { type: 'run'; work: Observable<R> }

/** A message stamped with the time it happened (epoch ms on the owner's scheduler): the only clock the logic reads. */
export type Timed<M> = M & { readonly at: number }

/** A change the task's work reports: status, input requests, and last how it ended. */
export type TaskWorkMessage<R = unknown> = Timed<Exclude<TaskMessage<R>, { type: 'run' | 'cancel' }>>

/** What the task logic takes: timed task messages, its start, its TTL's end, and what the runtime says of its work child. */
export type TaskLogicMessage<R = unknown> =
  | Timed<Exclude<TaskMessage<R>, { type: 'run' }>>
  /** Runs the work, already speaking task messages (see `taskWork`); refused when a work runs already. */
  | { type: 'run'; at: number; work: Observable<TaskWorkMessage<R>> }
  /** Sent once by the owner after spawning: starts the TTL timer, and the work if given. */
  | { type: 'rxmcp.task.start'; at: number; work?: Observable<TaskWorkMessage<R>> }
  /** The TTL timer's message. */
  | { type: 'rxmcp.task.expire' }
  | ChildMessage

/** A task actor's state: the task, and whether its work was started (a second `run` is refused). */
export interface TaskActorState<R = unknown> {
  readonly task: TaskState<R>
  readonly hasWork: boolean
}

/** What a task tells its owner (its `emit` effects): where the owner stores, notifies and reports. */
export type TaskEvent<R = unknown> =
  /** The task changed (status, status message, input requests, outcome); the first change is after creation. */
  | { type: 'changed'; task: TaskState<R> }
  /** A message the state machine forbids; the task was left as it was. */
  | { type: 'refused'; error: TaskTransitionError }
  /** The TTL elapsed before the task ended: the actor stops (status `stopped`) right after. */
  | { type: 'expired'; task: TaskState<R> }

/** The input of {@link taskLogic}: the task as created (times in epoch ms). */
export interface TaskInput {
  taskId: string
  owner: string
  /** Creation time; the TTL counts from it. */
  createdAt: number
  /** Retention from creation in ms; `null` never expires. */
  ttlMs: number | null
  pollIntervalMs: number
  statusMessage?: string
}

/** The id of a task's work child among its children (and the name of its logic). */
export const TASK_WORK = 'work'
const TTL = 'ttl'
const EXPIRE: TaskLogicMessage = Object.freeze({ type: 'rxmcp.task.expire' })

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

/** The task as it starts (MCP 2025-11-25: tasks MUST begin in working). */
export function initialTask<R>(input: TaskInput): TaskState<R> {
  const task: TaskState<R> = {
    taskId: input.taskId,
    owner: input.owner,
    status: 'working',
    createdAt: input.createdAt,
    lastUpdatedAt: input.createdAt,
    ttlMs: input.ttlMs,
    pollIntervalMs: input.pollIntervalMs,
  }
  if (input.statusMessage !== undefined) task.statusMessage = input.statusMessage
  return task
}

/** The work as a child of its task: each message it sends comes to the task. */
function spawnWork<R>(work: Observable<TaskWorkMessage<R>>): Effect {
  return effect.spawn(TASK_WORK, fromObservable(TASK_WORK, () => work))
}

/** The next state after a task message: a change to emit, the end (terminal), or a refusal. */
function applied<R>(state: TaskActorState<R>, message: Timed<Exclude<TaskMessage<R>, { type: 'run' }>>): Step<TaskActorState<R>> {
  const next = stepTask(state.task, message, message.at)
  if (next instanceof TaskTransitionError) return [state, [effect.emit({ type: 'refused', error: next } satisfies TaskEvent<R>)]]
  const changed = effect.emit({ type: 'changed', task: next } satisfies TaskEvent<R>)
  if (next.status === 'working' || next.status === 'input_required') return [{ ...state, task: next }, [changed]]
  // Terminal: the work is over or abandoned (MCP: a cancelled task MUST remain cancelled even if
  // execution continues), so it stops first; then the owner hears the end, and the actor is done.
  return [{ ...state, task: next }, [effect.stop(TASK_WORK), changed, effect.done(next)]]
}

/**
 * The logic of one task. Its owner spawns it with a {@link TaskInput}, sends `rxmcp.task.start`
 * (with the time, and the work if any), and reads its `TaskEvent`s; nothing reads its state
 * from outside. The work is an Observable of {@link TaskWorkMessage}s (see `taskWork`), run as
 * the child `work`.
 * @example
 * const task = system.spawn(taskLogic, { parent: tasks, id: taskId, input, onEvent })
 * task.send({ type: 'rxmcp.task.start', at: scheduler.now(), work: taskWork(work$, scheduler) })
 */
export const taskLogic: ActorLogic<TaskActorState<unknown>, TaskLogicMessage<unknown>, TaskInput> = {
  name: 'task',
  initial: input => ({ task: initialTask(input), hasWork: false }),
  transition: (state, message) => {
    switch (message.type) {
      case 'rxmcp.task.start': {
        const { task } = state
        const effects: Effect[] = []
        // MCP 2025-11-25: ttl is "time in milliseconds from creation before task may be deleted".
        if (task.ttlMs !== null) effects.push(effect.timer(TTL, Math.max(0, task.createdAt + task.ttlMs - message.at), EXPIRE))
        if (message.work === undefined || state.hasWork) return [state, effects]
        effects.push(spawnWork(message.work))
        return [{ ...state, hasWork: true }, effects]
      }
      case 'run': {
        if (state.hasWork) return [state, [effect.emit({ type: 'refused', error: new TaskTransitionError(state.task.taskId, state.task.status, 'run') } satisfies TaskEvent)]]
        return [{ ...state, hasWork: true }, [spawnWork(message.work)]]
      }
      case 'rxmcp.task.expire':
        return [state, [effect.emit({ type: 'expired', task: state.task } satisfies TaskEvent), effect.stop()]]
      case 'rxmcp.child.done':
        // The work ended without saying how (a work made by `taskWork` always does, first).
        if (message.id !== TASK_WORK) return [state, NONE]
        return applied(state, { type: 'fail', error: new Error('The task\'s work completed without a result'), at: state.task.lastUpdatedAt })
      case 'rxmcp.child.error':
        if (message.id !== TASK_WORK) return [state, NONE]
        return applied(state, { type: 'fail', error: message.error, at: state.task.lastUpdatedAt })
      case 'rxmcp.child.restarting':
        return [state, NONE]
      default:
        return applied(state, message)
    }
  },
}

/**
 * A work Observable as a task's work speaks: its last value becomes `complete` (or
 * `fail-with-result` when `isFailedResult` says so) when it completes, its error `fail`, each
 * stamped with `now()`; then it completes. Unsubscribing unsubscribes the work.
 */
export function taskWork<R>(work: Observable<R>, now: () => number, isFailedResult?: (result: R) => boolean): Observable<TaskWorkMessage<R>> {
  return new Observable<TaskWorkMessage<R>>(subscriber => {
    // The work's latest value, the result if it completes now.
    let last: { value: R } | undefined
    return work.subscribe({
      next: value => { last = { value } },
      error: (error: unknown) => { subscriber.next({ type: 'fail', error, at: now() }); subscriber.complete() },
      complete: () => {
        if (last === undefined) subscriber.next({ type: 'fail', error: new Error('The task\'s work completed without a result'), at: now() })
        else if (isFailedResult?.(last.value) === true) subscriber.next({ type: 'fail-with-result', result: last.value, at: now() })
        else subscriber.next({ type: 'complete', result: last.value, at: now() })
        subscriber.complete()
      },
    })
  })
}

/** What the tasks actor tells its owner. */
export type TasksEvent =
  /** A task's logic threw (a bug): the task ended with status `error`; its owner frees what it held. */
  { type: 'task-failed'; taskId: string; error: unknown }

/**
 * The logic of the task system's one actor, the parent of every task of a server (spawned with the
 * systemId `tasks`): it stops them with itself (the server closing), and tells its owner of a task
 * that failed. Tasks end `done` (terminal) or `stopped` (expired, dropped) on their own.
 */
export const tasksLogic: ActorLogic<null, ChildMessage> = {
  name: 'tasks',
  initial: () => null,
  transition: (state, message) => message.type === 'rxmcp.child.error'
    ? [state, [effect.emit({ type: 'task-failed', taskId: message.id, error: message.error } satisfies TasksEvent)]]
    : [state, NONE],
}
