/**
 * A handler's work as a task runs it: the Observable its task's `work` child owns (see
 * actors/tasks/task-logic.ts), speaking task messages.
 */
import { Observable, type SchedulerLike, type Subscriber } from '../../lib/rx.ts'
import { settleOutcome, type OutcomeObserver } from '../../lib/outcome.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { TaskWorkMessage } from '../tasks/task-logic.ts'
import type { HandlerOutcome } from '../request.ts'
import type { ServerContext } from './api.ts'
import type { TaskContext } from './task-context.ts'

/** A legacy tool result that is itself a failure. */
export const IS_ERROR_RESULT = (result: JsonObject) => result.isError === true

/**
 * The handler's work as the task's work child runs it: what the handler tells its task through its
 * context (status, input_required and back), then its outcome (`complete`, `fail-with-result` or
 * `fail`), each stamped with the scheduler's time; then it completes. Unsubscribing (cancel,
 * expiry, the session ending) stops the handler's Observable and aborts its signal.
 */
export function runWork(work: (ctx: ServerContext) => HandlerOutcome<JsonObject>, context: TaskContext, scheduler: SchedulerLike,
  isFailedResult: ((result: JsonObject) => boolean) | undefined): Observable<TaskWorkMessage<JsonObject>> {
  return new Observable<TaskWorkMessage<JsonObject>>(subscriber => {
    const updates = context.updates.subscribe(update => subscriber.next({ ...update, at: scheduler.now() }))
    const target: WorkTarget = { subscriber, scheduler, isFailedResult }
    let outcome: HandlerOutcome<JsonObject>
    try {
      outcome = work(context)
    } catch (error) {
      TO_TASK.error(target, error)
      return () => { updates.unsubscribe(); context.abort() }
    }
    const running = settleOutcome(outcome, target, TO_TASK)
    return () => { running?.unsubscribe(); updates.unsubscribe(); context.abort() }
  })
}

/** Where a task's work settles. */
interface WorkTarget {
  subscriber: Subscriber<TaskWorkMessage<JsonObject>>
  scheduler: SchedulerLike
  isFailedResult: ((result: JsonObject) => boolean) | undefined
}

/** Settles a task's work into its last message, then completion. */
const TO_TASK: OutcomeObserver<JsonObject, WorkTarget> = {
  value: ({ subscriber, scheduler, isFailedResult }, result) => {
    subscriber.next(isFailedResult?.(result) === true ? { type: 'fail-with-result', result, at: scheduler.now() } : { type: 'complete', result, at: scheduler.now() })
    subscriber.complete()
  },
  error: ({ subscriber, scheduler }, error) => {
    subscriber.next({ type: 'fail', error, at: scheduler.now() })
    subscriber.complete()
  },
}

