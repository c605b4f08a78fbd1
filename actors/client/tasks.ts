/**
 * The client's side of tasks, both eras: calling a tool as a task and following it to its end.
 *
 * ```
 * tools/call (legacy: params.task; modern: the tasks extension in this request's capabilities)
 *   '-- a plain result (the server ran it at once) --> result, done
 *   '-- a task --> task event --> wait pollIntervalMs (or a status notification) --> tasks/get
 *        working / input_required --> task event when it changed (modern input_required: each
 *          input request answered once by the client's handlers, then tasks/update) --> wait again
 *        completed / failed (legacy: tasks/result; modern: inline) --> result, or the task's error
 *        cancelled --> TaskCancelledError
 * ```
 */
import { EMPTY, Observable, defer, filter, lastValueFrom, mergeMap, timer, type SchedulerLike } from '../../lib/rx.ts'
import type { RequestOptions } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { CapabilityError, McpError, TaskCancelledError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { CallToolResult, ClientCapabilities, TaskStatus } from '../../lib/schema/types.ts'
import type { Era } from '../context.ts'
import { answerInputRequest, answerThrough, type InputAnswerHost } from './input-answers.ts'
import type { InputRequest } from './modern.ts'
import { ToolTaskSupportError } from './errors.ts'
import type { TaskSupport } from './tool-catalog.ts'

/** The tasks extension's identifier (MCP 2026-07-28). */
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** A task as the client sees it, the same in both eras (legacy `ttl`/`pollInterval` read as `ttlMs`/`pollIntervalMs`). */
export interface TaskInfo {
  taskId: string
  status: TaskStatus
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  /** Retention from creation in ms; null is unlimited. */
  ttlMs: number | null
  pollIntervalMs?: number
  /** Modern era, while input_required: the input requests the server waits for, by key. */
  inputRequests?: Record<string, { method: string; params?: JsonObject }>
}

/** What {@link McpClient.callToolAsTask} emits: the task as it changes, then the tool's result. */
export type ToolTaskEvent =
  | { type: 'task'; task: TaskInfo }
  | { type: 'result'; result: CallToolResult }

/** Options of `callToolAsTask`. */
export interface CallToolAsTaskOptions extends Omit<RequestOptions, 'progress'> {
  /** The retention to ask for (legacy `params.task.ttl`; the server may lower it). */
  ttlMs?: number
  /** Fewest ms between polls, whatever the task suggests (default 50). */
  minPollIntervalMs?: number
  /** Most ms between polls (default 30 s): a status notification may end a wait sooner. */
  maxPollIntervalMs?: number
  /** The clock of the polls (default: the client's scheduler). */
  scheduler?: SchedulerLike
}

/** Defaults of {@link CallToolAsTaskOptions}. */
export const TASK_POLL_DEFAULTS = { minPollIntervalMs: 50, maxPollIntervalMs: 30_000, pollIntervalMs: 1_000 } as const

/** What the tasks code needs from the client. */
export interface TaskClientHost extends InputAnswerHost {
  readonly era: Era | undefined
  readonly serverCapabilities: JsonObject
  readonly scheduler: SchedulerLike | undefined
  notifications(method: string): Observable<JsonObject>
  /** The tool's `execution.taskSupport` from the client's last listing; undefined when not known. */
  taskSupport(name: string): TaskSupport | undefined
}

/** The wire task of either era, read into {@link TaskInfo}; undefined when it is not one. */
export function readTask(wire: unknown): TaskInfo | undefined {
  if (!isJsonObject(wire) || typeof wire.taskId !== 'string' || typeof wire.status !== 'string') return undefined
  const ttl = wire.ttlMs !== undefined ? wire.ttlMs : wire.ttl
  const poll = wire.pollIntervalMs !== undefined ? wire.pollIntervalMs : wire.pollInterval
  const task: TaskInfo = {
    taskId: wire.taskId, status: wire.status as TaskStatus,
    createdAt: String(wire.createdAt ?? ''), lastUpdatedAt: String(wire.lastUpdatedAt ?? ''),
    ttlMs: typeof ttl === 'number' ? ttl : null,
  }
  if (typeof poll === 'number') task.pollIntervalMs = poll
  if (typeof wire.statusMessage === 'string') task.statusMessage = wire.statusMessage
  if (isJsonObject(wire.inputRequests)) task.inputRequests = wire.inputRequests as TaskInfo['inputRequests']
  return task
}

const isTerminal = (status: string) => status === 'completed' || status === 'failed' || status === 'cancelled'

/**
 * Calls a tool as a task and follows it; see the file's comment. Cold: each subscription calls
 * the tool once. Unsubscribing stops following, and does NOT cancel the task (it lives in the
 * server, and may be picked up again with `tasks.get` / `tasks.result` by id); cancelling is
 * `tasks.cancel(taskId)`.
 *
 * Legacy era (MCP 2025-11-25 tasks, tool-level negotiation): errors with `CapabilityError`, sending
 * nothing, when the server did not declare `tasks.requests.tools.call` ("clients MUST NOT attempt
 * to use task augmentation"), and with {@link ToolTaskSupportError} when the tool, as the client
 * last listed it, has `execution.taskSupport` "forbidden" or none ("MUST NOT attempt to invoke the
 * tool as a task"). A tool the client has not listed is sent, and the server decides. The modern
 * era has no per-tool task support: the server decides there.
 */
export function callToolAsTask(host: TaskClientHost, name: string, args: Record<string, unknown> | undefined, options: CallToolAsTaskOptions = {}): Observable<ToolTaskEvent> {
  return defer(() => {
    const era = host.era
    const params: JsonObject = args === undefined ? { name } : { name, arguments: args as JsonObject }
    const requestOptions: RequestOptions = { ...options, progress: false }
    if (era === 'modern') {
      // Declared for this request only: a plain callTool never gets a task it did not ask for.
      params._meta = tasksMeta(host)
    } else {
      const tasks = host.serverCapabilities.tasks as { requests?: { tools?: { call?: unknown } } } | undefined
      if (!isJsonObject(tasks?.requests?.tools?.call)) {
        throw new CapabilityError('The server did not declare tasks.requests.tools.call: its tools cannot run as tasks')
      }
      if (host.taskSupport(name) === 'forbidden') throw new ToolTaskSupportError(name, 'forbidden')
      params.task = options.ttlMs === undefined ? {} : { ttl: options.ttlMs }
    }
    return host.request<JsonObject>('tools/call', params, requestOptions).pipe(resultOf(), mergeMap(answer => {
      const created = readTask(era === 'modern' ? (answer.resultType === 'task' ? answer : undefined) : answer.task)
      if (created === undefined) return [{ type: 'result', result: answer as unknown as CallToolResult } as ToolTaskEvent]
      return new Observable<ToolTaskEvent>(subscriber => {
        subscriber.next({ type: 'task', task: created })
        return follow(host, era ?? 'legacy', created, options).subscribe(subscriber)
      })
    }))
  })
}

/** The `_meta` of a modern request that declares the tasks extension, made once per client. */
const tasksMetas = new WeakMap<ClientCapabilities, JsonObject>()
function tasksMeta(host: TaskClientHost): JsonObject {
  let meta = tasksMetas.get(host.capabilities)
  if (meta === undefined) tasksMetas.set(host.capabilities, meta = { 'io.modelcontextprotocol/clientCapabilities': withTasksExtension(host.capabilities) as unknown as JsonObject })
  return meta
}

/** A request of the tasks methods: in the modern era, declaring the extension they belong to. */
function taskRequest(host: TaskClientHost, method: string, params: JsonObject, options: RequestOptions | undefined): Promise<JsonObject> {
  if (host.era === 'modern') params._meta = tasksMeta(host)
  return lastValueFrom(host.request<JsonObject>(method, params, { ...options, progress: false }).pipe(resultOf()))
}

/** `tasks/get`: the wire answer and the task read from it (-32603 when it is not one). */
async function getTask(host: TaskClientHost, taskId: string, options: RequestOptions | undefined): Promise<{ wire: JsonObject; task: TaskInfo }> {
  const wire = await taskRequest(host, 'tasks/get', { taskId }, options)
  const task = readTask(wire)
  if (task === undefined) throw new McpError(-32603, `tasks/get for ${taskId} answered something that is not a task`)
  return { wire, task }
}

/** Ms until the next poll: the task's `pollIntervalMs`, kept between the options' bounds. */
function pollWait(task: TaskInfo, options: CallToolAsTaskOptions | undefined): number {
  const min = options?.minPollIntervalMs ?? TASK_POLL_DEFAULTS.minPollIntervalMs
  const max = options?.maxPollIntervalMs ?? TASK_POLL_DEFAULTS.maxPollIntervalMs
  return Math.min(max, Math.max(min, task.pollIntervalMs ?? TASK_POLL_DEFAULTS.pollIntervalMs))
}

/** A settled task's outcome in the modern era (the extension inlines it): its result, or thrown, its error. */
function modernOutcome(task: TaskInfo, wire: JsonObject): CallToolResult {
  if (task.status === 'cancelled') throw new TaskCancelledError(task.taskId)
  if (isJsonObject(wire.error)) throw McpError.from(wire.error as { code: number; message: string; data?: unknown })
  return (wire.result ?? {}) as unknown as CallToolResult
}

/** Polls a task from `first` to its end; see the file's comment. */
function follow(host: TaskClientHost, era: Era, first: TaskInfo, options: CallToolAsTaskOptions): Observable<ToolTaskEvent> {
  return new Observable<ToolTaskEvent>(subscriber => {
    const taskId = first.taskId
    const scheduler = options.scheduler ?? host.scheduler
    const answered = new Set<string>()
    let last = first
    const get: RequestOptions = { ...options, progress: false }
    // Legacy servers may say a task changed; a notification for this task ends the wait early.
    const nudges = era === 'legacy' ? host.notifications('notifications/tasks/status').pipe(filter(params => params.taskId === taskId)) : EMPTY
    /** Resolves after `ms`, or sooner on a status notification of this task; stops when unsubscribed. */
    const pause = (ms: number) => new Promise<void>(resolve => {
      const done = () => { waits.unsubscribe(); resolve() }
      const waits = timer(ms, scheduler).subscribe(done)
      waits.add(nudges.subscribe(done))
      subscriber.add(waits)
    })
    const step = async (): Promise<void> => {
      for (;;) {
        await pause(pollWait(last, options))
        if (subscriber.closed) return
        const { wire, task } = await getTask(host, taskId, get)
        if (task.status !== last.status || task.statusMessage !== last.statusMessage || task.lastUpdatedAt !== last.lastUpdatedAt) subscriber.next({ type: 'task', task })
        last = task
        if (isTerminal(task.status)) return finish(task, wire)
        if (era === 'modern' && task.status === 'input_required') await answerInputs(task)
      }
    }
    const finish = async (task: TaskInfo, wire: JsonObject): Promise<void> => {
      if (era === 'modern') {
        subscriber.next({ type: 'result', result: modernOutcome(task, wire) })
        return
      }
      if (task.status === 'cancelled') throw new TaskCancelledError(taskId)
      // Legacy: tasks/result answers what the call would have (its result, or its JSON-RPC error).
      const result = await taskRequest(host, 'tasks/result', { taskId }, get)
      subscriber.next({ type: 'result', result: result as unknown as CallToolResult })
    }
    const answerInputs = async (task: TaskInfo): Promise<void> => {
      const responses: JsonObject = {}
      for (const [key, request] of Object.entries(task.inputRequests ?? {})) {
        // Keys are unique for the task's life: a key seen again on a later poll was answered already.
        if (answered.has(key)) continue
        answered.add(key)
        // The call's own answerer when it has one (a proxy answering with its caller), else the client's handlers.
        const answer = options.answerInput !== undefined ? answerThrough(options.answerInput, request as InputRequest) : answerInputRequest(host, key, request as InputRequest)
        responses[key] = await lastValueFrom(answer)
      }
      if (Object.keys(responses).length > 0) await taskRequest(host, 'tasks/update', { taskId, inputResponses: responses }, get)
    }
    step().then(() => subscriber.complete(), error => subscriber.error(error))
  })
}

/** The client's capabilities with the tasks extension declared. */
export function withTasksExtension(capabilities: ClientCapabilities): ClientCapabilities {
  return { ...capabilities, extensions: { ...capabilities.extensions, [TASKS_EXTENSION]: {} } }
}

/** `client.tasks`: one task by id, in the era the client speaks. */
export class ClientTasks {
  constructor(private readonly host: TaskClientHost) {}

  #request(method: string, params: JsonObject, options?: RequestOptions): Promise<JsonObject> {
    return taskRequest(this.host, method, params, options)
  }

  /** The task now (`tasks/get`). */
  async get(taskId: string, options?: RequestOptions): Promise<TaskInfo> {
    return (await getTask(this.host, taskId, options)).task
  }

  /** Legacy `tasks/list`: the client's tasks, a page at a time. */
  async list(cursor?: string, options?: RequestOptions): Promise<{ tasks: TaskInfo[]; nextCursor?: string }> {
    const page = await this.#request('tasks/list', cursor === undefined ? {} : { cursor }, options)
    const tasks = (Array.isArray(page.tasks) ? page.tasks : []).map(readTask).filter((task): task is TaskInfo => task !== undefined)
    return typeof page.nextCursor === 'string' ? { tasks, nextCursor: page.nextCursor } : { tasks }
  }

  /** Asks the server to cancel the task (`tasks/cancel`); the server decides when it takes effect. */
  async cancel(taskId: string, options?: RequestOptions): Promise<void> {
    await this.#request('tasks/cancel', { taskId }, options)
  }

  /**
   * The task's result once it ends: legacy `tasks/result` (the server waits), modern polling
   * `tasks/get`. Rejects with the task's JSON-RPC error, or {@link TaskCancelledError}.
   */
  async result(taskId: string, options?: CallToolAsTaskOptions): Promise<CallToolResult> {
    if (this.host.era !== 'modern') {
      const task = await this.get(taskId, options)
      if (task.status === 'cancelled') throw new TaskCancelledError(taskId)
      try {
        return await this.#request('tasks/result', { taskId }, { timeout: 0, ...options }) as unknown as CallToolResult
      } catch (error) {
        // A task cancelled while the server held tasks/result ends it with an error of the server's choosing.
        if (error instanceof McpError && (await this.get(taskId, options).catch(() => undefined))?.status === 'cancelled') throw new TaskCancelledError(taskId, { cause: error })
        throw error
      }
    }
    const scheduler = options?.scheduler ?? this.host.scheduler
    for (;;) {
      const { wire, task } = await getTask(this.host, taskId, options)
      if (isTerminal(task.status)) return modernOutcome(task, wire)
      await lastValueFrom(timer(pollWait(task, options), scheduler))
    }
  }
}

/** The events of a task call, as a Promise of its result (what `callToolAsTaskResult` waits for). */
export async function lastResult(events: Observable<ToolTaskEvent>): Promise<CallToolResult> {
  const last = await lastValueFrom(events)
  if (last.type !== 'result') throw new McpError(-32603, 'The task ended without a result')
  return last.result
}

