/**
 * The context a handler gets while it runs as a task. The request that created the task was
 * answered at once (CreateTaskResult), so nothing here may lean on it: the signal is the task's
 * (cancel and expiry abort it), and asking the client goes the way the task's era allows.
 *
 * - Legacy era (MCP 2025-11-25 tasks): a live server-to-client request on the session, tagged with
 *   the related-task `_meta`; the task shows `input_required` while one is outstanding. Progress
 *   keeps the original token (it stays valid for the task's life); logs go to the session.
 * - Modern era (the `io.modelcontextprotocol/tasks` extension): an input request the task carries
 *   in `inputRequests` until the client answers it with `tasks/update`; the handler's promise
 *   resolves then, without running the handler again. Progress and log notifications are not sent
 *   (the extension forbids them for tasks); `progress` with a message sets the status message.
 */
import type { Principal } from '../../lib/auth.ts'
import type { RequestInfo } from '../../lib/transport.ts'
import { Subject, throwError, type Observable } from '../../lib/rx.ts'
import { outcomePromise } from '../request.ts'
import type { RequestOptions } from '../../lib/connection.ts'
import type { JsonObject, Meta, ProgressToken, RequestId } from '../../lib/jsonrpc/message.ts'
import { CancelledError, CapabilityError, InvalidParamsError, MissingRequiredClientCapabilityError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { hasCapability, requiredCapability } from '../../lib/schema/capabilities.ts'
import { inputRequestProblem } from '../../lib/schema/input-requests.ts'
import type {
  ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Implementation, ListRootsResult, LoggingLevel,
} from '../../lib/schema/types.ts'
import { ProgressSequence, type RequestEvent } from '../../lib/operators/progress.ts'
import { BaseContext, type Era, type TraceContext } from '../context.ts'
import type { HandlerOutcome } from '../request.ts'
import type { InputOptions, ServerContext, ServerSession, TaskHandle } from './api.ts'
import { withRelatedTask, type TaskMessage, type TaskState } from '../tasks/task.ts'
import { ANSWER_CHECKS, capabilityObject } from './input-checks.ts'
import { checkElicitResult } from './elicitation.ts'
import type { JsonSchemaSource } from '../../lib/validator.ts'


type InputRequests = NonNullable<TaskState['inputRequests']>

/** What the handler's doings tell its task (through the task's work, see `runWork` in tasks.ts). */
export type TaskUpdate = Extract<TaskMessage<JsonObject>, { type: 'status' | 'input-required' | 'resume' }>

/** The reason a task's signal aborts with: its work is over (cancelled, expired, or ended). One object, made once. */
const TASK_OVER = new CancelledError('The task is over: cancelled, expired, or its work ended')

/**
 * A modern task's outstanding input requests: each key is used once in the task's life (the
 * extension requires it), an answer resolves the handler's promise, and the task shows
 * `input_required` with every outstanding request until the last is answered.
 */
class TaskInputs {
  readonly #outstanding = new Map<string, { method: string; params: JsonObject; resolve: (answer: unknown) => void }>()
  readonly #used = new Set<string>()
  #count = 0
  /** Whether this put the task in input_required (read from here: the actor may not have applied it yet). */
  #isWaiting = false

  constructor(readonly taskId: string, readonly send: (update: TaskUpdate) => void) {}

  ask(method: string, params: JsonObject, capabilities: object, key: string | undefined): Promise<unknown> {
    // MCP sampling and elicitation: a malformed request is the handler's mistake, never asked.
    const problem = inputRequestProblem(method, params)
    if (problem !== undefined) return Promise.reject(new TypeError(`Cannot ask ${method}: ${problem}`))
    const needed = requiredCapability(method, params)
    if (needed !== undefined && !hasCapability(capabilities, needed)) {
      return Promise.reject(new MissingRequiredClientCapabilityError(
        `Missing required client capability: ${needed.join('.')} (the request that created the task did not declare it)`,
        { requiredCapabilities: capabilityObject(needed) },
      ))
    }
    let id = key ?? `${method === 'elicitation/create' ? 'elicitation' : method === 'sampling/createMessage' ? 'sampling' : 'roots'}-${++this.#count}`
    while (key === undefined && this.#used.has(id)) id = `${id}-${++this.#count}`
    if (this.#used.has(id)) return Promise.reject(new TypeError(`Input key ${JSON.stringify(id)} was already used in task ${this.taskId}: a key names one request for the task's life`))
    this.#used.add(id)
    return new Promise(resolve => {
      this.#outstanding.set(id, { method, params, resolve })
      this.#publish()
    })
  }

  /**
   * The client's answers (`tasks/update`): each checked against the method it answers, all before
   * any is taken (-32602 for a malformed one); keys not outstanding are ignored.
   */
  answer(responses: JsonObject): void {
    const taken: Array<[string, unknown]> = []
    for (const [key, answer] of Object.entries(responses)) {
      const input = this.#outstanding.get(key)
      if (input === undefined) continue
      if (!isJsonObject(answer) || !(ANSWER_CHECKS[input.method]?.(answer) ?? true)) {
        throw new InvalidParamsError(`Invalid params: inputResponses.${key} is not a valid answer to ${input.method}`, { key })
      }
      taken.push([key, answer])
    }
    if (taken.length === 0) return
    for (const [key, answer] of taken) {
      this.#outstanding.get(key)!.resolve(answer)
      this.#outstanding.delete(key)
    }
    this.#publish()
  }

  #publish(): void {
    if (this.#outstanding.size === 0) {
      if (this.#isWaiting) this.send({ type: 'resume' })
      this.#isWaiting = false
      return
    }
    const inputRequests: InputRequests = {}
    for (const [key, input] of this.#outstanding) inputRequests[key] = { method: input.method, params: input.params }
    this.#isWaiting = true
    this.send({ type: 'input-required', inputRequests })
  }
}

/** The context of a handler running as a task; see the file's comment. */
export class TaskContext implements ServerContext {
  readonly #origin: ServerContext
  readonly #taskId: string
  /**
   * What the handler tells its task (status messages, input_required and back): the task's work
   * carries these to the task as messages, stamped with the time (see `runWork` in tasks.ts).
   */
  readonly updates = new Subject<TaskUpdate>()
  /** Made when the handler first reads `signal`: most handlers never do, and aborting one costs. */
  #controller: AbortController | undefined
  #isOver = false
  readonly #inputs: TaskInputs | undefined
  /** Legacy: live requests to the client now outstanding (the task is input_required while > 0). */
  #asking = 0
  readonly task: TaskHandle
  /** The progress values sent for the token, which the task keeps: the request's own sequence goes on here. */
  readonly #progress: ProgressSequence

  /** The server's JSON Schema validator, for the answers to elicitations. */
  readonly #jsonSchema: JsonSchemaSource

  constructor(origin: ServerContext, taskId: string, jsonSchema: JsonSchemaSource) {
    this.#origin = origin
    this.#jsonSchema = jsonSchema
    this.#taskId = taskId
    this.#progress = origin instanceof BaseContext ? origin.progressSequence : new ProgressSequence()
    this.#inputs = origin.era === 'modern' ? new TaskInputs(taskId, update => this.#tell(update)) : undefined
    this.task = {
      taskId,
      setStatusMessage: (statusMessage: string) => this.#tell({ type: 'status', statusMessage }),
    }
  }

  /** Tells the task, while its work runs. */
  #tell(update: TaskUpdate): void {
    if (!this.#isOver) this.updates.next(update)
  }

  /** Aborts the signal: the task was cancelled, expired, or its work ended. */
  abort(): void {
    if (this.#isOver) return
    this.#isOver = true
    this.updates.complete()
    this.#controller?.abort(TASK_OVER)
  }

  /** Answers to the task's input requests (modern `tasks/update`). */
  answer(responses: JsonObject): void { this.#inputs?.answer(responses) }

  get era(): Era { return this.#origin.era }
  get protocolVersion(): string { return this.#origin.protocolVersion }
  get requestId(): RequestId { return this.#origin.requestId }
  get method(): string { return this.#origin.method }
  get meta(): Meta | undefined { return this.#origin.meta }
  get progressToken(): ProgressToken | undefined { return this.#origin.progressToken }
  get trace(): TraceContext | undefined { return this.#origin.trace }
  get principal(): Principal | undefined { return this.#origin.principal }
  get requestInfo(): RequestInfo { return this.#origin.requestInfo }
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#isOver) this.#controller.abort(TASK_OVER)
    }
    return this.#controller.signal
  }
  get session(): ServerSession | undefined { return this.#origin.session }
  /** The session of a legacy task's request (a legacy request always has one). */
  get #legacySession(): ServerSession { return this.#origin.session! }
  get clientCapabilities(): ClientCapabilities { return this.#origin.clientCapabilities }
  get clientInfo(): Implementation | undefined { return this.#origin.clientInfo }
  get logLevel(): LoggingLevel { return this.#origin.logLevel }
  /** A task runs once: there are no rounds to carry state across. */
  get requestState(): unknown { return undefined }
  setRequestState(_value: unknown): void {}
  closeStream(): void {}

  /** Already a task: the work runs here, in this task. */
  runAsTask<R extends JsonObject>(work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R> {
    return outcomePromise(work(this))
  }

  progress(progress: number, total?: number, message?: string): void {
    if (this.#isOver) return
    if (this.era === 'modern') {
      if (message !== undefined) this.task.setStatusMessage(message)
      return
    }
    const progressToken = this.progressToken
    // MCP progress: values increase for the token's whole life, the request's reports included.
    if (progressToken === undefined || !this.#progress.take(progress)) return
    const params: JsonObject = { progressToken, progress }
    if (total !== undefined) params.total = total
    if (message !== undefined) params.message = message
    this.notify('notifications/progress', this.#related(params))
  }

  notify(method: string, params?: JsonObject): void {
    if (this.era === 'modern' || this.#isOver) return
    this.#legacySession.notify(method as never, params as never)
  }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    if (this.era === 'legacy' && !this.#isOver) this.#legacySession.log(level, data, logger)
  }

  request<R extends JsonObject = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>> {
    if (this.era === 'modern') {
      return throwError(() => new CapabilityError(`Cannot send ${method} to a client in the modern era: a task asks through ctx.elicit, ctx.sample, ctx.listRoots`))
    }
    return this.#legacySession.request<R>(method as never, this.#related(params ?? {}) as never, { signal: this.signal, ...options } as never) as Observable<RequestEvent<R>>
  }

  sample(params: CreateMessageParams, options?: InputOptions): Promise<CreateMessageResult> {
    if (this.#inputs !== undefined) return this.#inputs.ask('sampling/createMessage', params as unknown as JsonObject, this.clientCapabilities, options?.key) as Promise<CreateMessageResult>
    return this.#live(() => this.#legacySession.sample(this.#related(params as unknown as JsonObject) as unknown as CreateMessageParams, { signal: this.signal, ...options }))
  }

  /** The client's answer, checked against `params` in either era (see checkElicitResult). */
  elicit(params: ElicitParams, options?: InputOptions): Promise<ElicitResult> {
    const answer = this.#inputs !== undefined ? this.#inputs.ask('elicitation/create', params as unknown as JsonObject, this.clientCapabilities, options?.key)
      : this.#live(() => this.#legacySession.elicit(this.#related(params as unknown as JsonObject) as unknown as ElicitParams, { signal: this.signal, ...options }))
    return answer.then(result => checkElicitResult(params, result, this.#jsonSchema))
  }

  listRoots(options?: InputOptions): Promise<ListRootsResult> {
    if (this.#inputs !== undefined) return this.#inputs.ask('roots/list', {}, this.clientCapabilities, options?.key) as Promise<ListRootsResult>
    return this.#live(() => this.#legacySession.listRoots({ signal: this.signal, ...options }))
  }

  /** Params with the related-task `_meta` (MCP 2025-11-25: every message of a task carries it). */
  #related(params: JsonObject): JsonObject {
    return withRelatedTask(params, this.#taskId) as JsonObject
  }

  /**
   * A live request to the client: the task is input_required from the first outstanding one until
   * every one is answered (the task refuses, harmlessly, what no longer applies: it ended meanwhile).
   */
  async #live<T>(send: () => Promise<T>): Promise<T> {
    if (this.#asking++ === 0) this.#tell({ type: 'input-required' })
    try {
      return await send()
    } finally {
      if (--this.#asking === 0) this.#tell({ type: 'resume' })
    }
  }
}
