/**
 * The client running the server's requests as tasks (MCP 2025-11-25 tasks, the receiver being the
 * client): a server may send `sampling/createMessage` or `elicitation/create` with `params.task`
 * to a client that declared `tasks.requests` for it. The client then answers a CreateTaskResult at
 * once, runs its handler as a task actor, and answers the server's `tasks/get`, `tasks/result`,
 * `tasks/list` and `tasks/cancel` for those tasks. Tasks live in the client for their TTL; the
 * only requestor is the server, so there is no owner to check.
 */
import { Observable, lastValueFrom } from '../../lib/rx.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InternalError, InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { pageOf, withCursor } from '../../lib/cursor.ts'
import type { ClientCapabilities } from '../../lib/schema/types.ts'
import { outcomePromise } from '../request.ts'
import { randomTaskId } from '../tasks/store.ts'
import { TASK_DEFAULTS, TaskTransitionError, createTask, isTerminalStatus, settledAnswer, taskToWire, type TaskRef } from '../tasks/task.ts'
import type { InputHandler } from './input-answers.ts'

/** Options of the client's tasks (ClientOptions.tasks). */
export interface ClientTaskOptions {
  /** Retention of a task when the server asks for none (default 1 hour). */
  defaultTtlMs?: number
  /** The longest retention granted (default 24 hours). */
  maxTtlMs?: number
  /** The poll interval the tasks suggest (default 1 s). */
  pollIntervalMs?: number
  /** Most tasks held at once (default 1,000); past it a task-augmented request is refused. */
  maxTasks?: number
}

/** The methods a client may run as tasks, and where each sits under `tasks.requests`. */
const TASKABLE: ReadonlyArray<readonly [method: string, kind: string, name: string]> = [
  ['sampling/createMessage', 'sampling', 'createMessage'],
  ['elicitation/create', 'elicitation', 'create'],
]

/**
 * Adds task running to the client's handlers: the sampling and elicitation handlers it has take
 * `params.task`, and the tasks methods are answered. Returns the capabilities to declare.
 */
export function withTaskRequests(handlers: Map<string, InputHandler>, capabilities: ClientCapabilities, options: ClientTaskOptions, report: (error: unknown) => void): ClientCapabilities {
  const tasks = new Map<string, TaskRef<JsonObject>>()
  const requests: Record<string, JsonObject> = {}
  const ttlOf = (asked: unknown) => {
    const max = options.maxTtlMs ?? 24 * 3_600_000
    return typeof asked === 'number' && asked >= 0 ? Math.min(Math.floor(asked), max) : options.defaultTtlMs ?? TASK_DEFAULTS.ttlMs
  }
  for (const [method, kind, name] of TASKABLE) {
    const handler = handlers.get(method)
    if (handler === undefined) continue
    requests[kind] = { [name]: {} }
    handlers.set(method, (params, ctx) => {
      if (!isJsonObject(params?.task)) return handler(params, ctx)
      if (tasks.size >= (options.maxTasks ?? 1000)) throw new InternalError(`Internal error: this client holds ${options.maxTasks ?? 1000} tasks, its most`)
      const { task: asked, ...rest } = params!
      const ref: TaskRef<JsonObject> = createTask<JsonObject>({
        taskId: randomTaskId(), owner: '', ttlMs: ttlOf((asked as JsonObject).ttl), pollIntervalMs: options.pollIntervalMs,
        work: new Observable<JsonObject>(subscriber => { outcomePromise(handler(rest, ctx)).then(value => { subscriber.next(value); subscriber.complete() }, error => subscriber.error(error)) }),
        reportError: error => { if (!(error instanceof TaskTransitionError)) report(error) },
        onExpire: () => { tasks.delete(ref.taskId) },
      })
      tasks.set(ref.taskId, ref)
      return { task: taskToWire(ref.state) as unknown as JsonObject }
    })
  }
  if (Object.keys(requests).length === 0) return capabilities

  const find = (params: JsonObject | undefined): TaskRef<JsonObject> => {
    const task = typeof params?.taskId === 'string' ? tasks.get(params.taskId) : undefined
    if (task === undefined) throw new InvalidParamsError(`Invalid params: no task ${JSON.stringify(params?.taskId)}`)
    return task
  }
  handlers.set('tasks/get', params => taskToWire(find(params).state) as unknown as JsonObject)
  handlers.set('tasks/list', params => {
    const page = pageOf('tasks', [...tasks.values()], params?.cursor, 50)
    return withCursor({ tasks: page.items.map(task => taskToWire(task.state) as unknown as JsonObject) }, page.nextCursor)
  })
  handlers.set('tasks/cancel', params => {
    const task = find(params)
    if (isTerminalStatus(task.state.status)) throw new InvalidParamsError(`Invalid params: task ${task.taskId} is already ${task.state.status}`)
    task.send({ type: 'cancel' })
    return taskToWire(task.state) as unknown as JsonObject
  })
  handlers.set('tasks/result', async params => settledAnswer(await lastValueFrom(find(params).settled)) as JsonObject)
  return { ...capabilities, tasks: { ...capabilities.tasks, list: {}, cancel: {}, requests } }
}
