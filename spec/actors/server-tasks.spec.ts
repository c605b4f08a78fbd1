import { describe, expect, it } from 'vitest'
import { Subject, filter, firstValueFrom } from 'rxjs'
import { createServer, type McpServer, type ServerOptions } from '../../actors/server.ts'
import type { Connection } from '../../lib/connection.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { rawClient } from '../helpers/raw-client.ts'
import { createMemoryTaskStore } from '../../actors/tasks/store.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { taskChanges } from '../helpers/task-changes.ts'
import { cleanupsAfterEach } from '../helpers/cleanups.ts'

const MODERN = '2026-07-28'
const TASKS = 'io.modelcontextprotocol/tasks'
const RELATED = 'io.modelcontextprotocol/related-task'
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

const { cleanups, unhandled } = cleanupsAfterEach()

/** A gate a test opens to let a tool finish. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>(resolve => { open = resolve })
  return { open, opened }
}

/**
 * A server with the tools these tests call: `slow` (optional task; waits for the gate), `quick`
 * (optional), `only_task` (required), `plain` (forbidden), `broken` (throws -32602), `tool_error`
 * (isError result), `asks` (elicits inside the task), `mrtr_then_task` (asks, then runAsTask).
 */
function makeServer(options: ServerOptions = {}) {
  const server = createServer({ name: 'tasks', version: '1.0.0' }, { reportUnhandledError: error => unhandled.push(error), ...options })
  cleanups.push(() => server.close())
  // What tests wait on: each task change, once stored and published.
  const { reached } = taskChanges(server)
  const slowGate = gate()
  const aborted: string[] = []
  server.tool('slow', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    ctx.signal.addEventListener('abort', () => aborted.push(ctx.task?.taskId ?? '?'))
    ctx.task?.setStatusMessage('waiting for the gate')
    await slowGate.opened
    return text('slow done')
  })
  server.tool('quick', { execution: { taskSupport: 'optional' } }, () => text('quick'))
  server.tool('asks_two', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    const schema = { type: 'object' as const, properties: { name: { type: 'string' as const } } }
    const [a, b] = await Promise.all([ctx.elicit({ mode: 'form', message: 'A?', requestedSchema: schema }), ctx.elicit({ mode: 'form', message: 'B?', requestedSchema: schema })])
    return text(`${String(a.content?.name)} and ${String(b.content?.name)}`)
  })
  server.tool('asks_as_task', {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }, { task: { ttlMs: 5000 } })
    return text(`the client's task said ${String(answer.content?.name)}`)
  })
  server.tool('reports', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    await slowGate.opened
    ctx.progress(1, 2, 'half')
    ctx.progress(2, 2, 'all')
    return text('reported')
  })
  server.tool('only_task', { execution: { taskSupport: 'required' } }, () => text('as a task'))
  server.tool('plain', {}, () => text('plain'))
  server.tool('broken', { execution: { taskSupport: 'optional' } }, () => { throw new InvalidParamsError('Invalid params: broken on purpose') })
  server.tool('tool_error', { execution: { taskSupport: 'optional' } }, () => ({ ...text('it failed'), isError: true }))
  server.tool('asks', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return text(`hello ${String(answer.content?.name)}`)
  })
  server.tool('mrtr_then_task', { execution: { taskSupport: 'required' }, taskStart: 'handler' }, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { user_name: { type: 'string' } } } })
    return ctx.runAsTask(async taskCtx => text(`task for ${String(answer.content?.user_name)} (${taskCtx.task?.taskId === undefined ? 'no task' : 'in task'})`))
  })
  return { server, slowGate, aborted, reached }
}

/** A raw JSON-RPC client over a memory pair. */
async function open(server: McpServer) {
  const client = await rawClient(server, close => cleanups.push(close))
  return { ...client, raw: client.connection }
}

async function openLegacy(server: McpServer, capabilities: JsonObject = {}) {
  const client = await open(server)
  const init = await client.call('initialize', { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } })
  client.raw.notify('notifications/initialized')
  return { ...client, init }
}

function notifications(raw: Connection, method: string) {
  const seen: JsonObject[] = []
  const arrivals = new Subject<JsonObject>()
  raw.notifications(method).subscribe(params => { seen.push(params); arrivals.next(params) })
  const until = async (predicate: (params: JsonObject) => boolean) => seen.find(predicate) ?? firstValueFrom(arrivals.pipe(filter(predicate)))
  return { seen, until }
}

const modernMeta = (capabilities: JsonObject = { extensions: { [TASKS]: {} } }) =>
  ({ [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: capabilities, [MetaKey.clientInfo]: { name: 'raw', version: '1' } })

describe('tasks, legacy era (MCP 2025-11-25)', () => {
  it('declares the tasks capability and each tool\'s taskSupport', async () => {
    const { server } = makeServer()
    const { init, call } = await openLegacy(server)
    expect((init.capabilities as JsonObject).tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } })
    const { tools } = await call('tools/list') as { tools: Array<{ name: string; execution?: JsonObject }> }
    expect(tools.find(tool => tool.name === 'only_task')?.execution).toEqual({ taskSupport: 'required' })
  })

  it('runs a task-augmented call as a task: CreateTaskResult at once, tasks/get, tasks/result waits, status notifications', async () => {
    const { server, slowGate } = makeServer()
    const { raw, call } = await openLegacy(server)
    const statuses = notifications(raw, 'notifications/tasks/status')
    const created = await call('tools/call', { name: 'slow', arguments: {}, task: { ttl: 60_000 } })
    const task = created.task as JsonObject
    expect(task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 1000 })
    expect(typeof task.taskId).toBe('string')
    expect((task.taskId as string).length).toBeGreaterThanOrEqual(22)
    expect(Date.parse(task.createdAt as string)).not.toBeNaN()
    const polled = await call('tasks/get', { taskId: task.taskId as string })
    expect(polled).toMatchObject({ taskId: task.taskId, status: 'working', ttl: 60_000 })
    const result = call('tasks/result', { taskId: task.taskId as string })
    slowGate.open()
    expect(await result).toEqual({ ...text('slow done'), _meta: { [RELATED]: { taskId: task.taskId } } })
    const completed = await statuses.until(params => params.status === 'completed')
    expect(completed.taskId).toBe(task.taskId)
    expect(await call('tasks/get', { taskId: task.taskId as string })).toMatchObject({ status: 'completed' })
  })

  it("keeps the call's progress token inside the task, with the related-task _meta", async () => {
    const { server, slowGate } = makeServer()
    const { raw } = await openLegacy(server)
    const progress = notifications(raw, 'notifications/progress')
    const created = await firstValueFrom(raw.request('tools/call', { name: 'reports', arguments: {}, task: {}, _meta: { progressToken: 'p-1' } }, { progress: false, timeout: 0 }).pipe(resultOf()))
    const taskId = (created.task as JsonObject).taskId
    slowGate.open()
    const last = await progress.until(params => params.progress === 2)
    expect(progress.seen.map(params => [params.progressToken, params.progress, params.message])).toEqual([['p-1', 1, 'half'], ['p-1', 2, 'all']])
    expect((last._meta as JsonObject)[RELATED]).toEqual({ taskId })
  })

  it('refuses a task for a forbidden tool and a plain call of a required one with -32601', async () => {
    const { server } = makeServer()
    const { call, failure } = await openLegacy(server)
    expect((await failure('tools/call', { name: 'plain', arguments: {}, task: {} })).code).toBe(ErrorCode.MethodNotFound)
    expect((await failure('tools/call', { name: 'only_task', arguments: {} })).code).toBe(ErrorCode.MethodNotFound)
    expect(await call('tools/call', { name: 'quick', arguments: {} })).toEqual(text('quick'))
  })

  it('cancels: the answer is the task, cancelled; the handler is aborted; a second cancel and tasks/result fail', async () => {
    const { server, aborted } = makeServer()
    const { call, failure } = await openLegacy(server)
    const { task } = await call('tools/call', { name: 'slow', arguments: {}, task: {} }) as { task: { taskId: string } }
    expect(await call('tasks/cancel', { taskId: task.taskId })).toMatchObject({ taskId: task.taskId, status: 'cancelled' })
    expect(aborted).toEqual([task.taskId])
    expect((await failure('tasks/cancel', { taskId: task.taskId })).code).toBe(ErrorCode.InvalidParams)
    expect(await call('tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'cancelled' })
    await failure('tasks/result', { taskId: task.taskId })
  })

  it('fails a task with the JSON-RPC error, and with a tool result that is an error', async () => {
    const { server } = makeServer()
    const { call, failure } = await openLegacy(server)
    const broken = (await call('tools/call', { name: 'broken', arguments: {}, task: {} })).task as { taskId: string }
    expect((await failure('tasks/result', { taskId: broken.taskId })).code).toBe(ErrorCode.InvalidParams)
    expect(await call('tasks/get', { taskId: broken.taskId })).toMatchObject({ status: 'failed', statusMessage: 'Invalid params: broken on purpose' })
    const toolError = (await call('tools/call', { name: 'tool_error', arguments: {}, task: {} })).task as { taskId: string }
    expect(await call('tasks/result', { taskId: toolError.taskId })).toMatchObject({ isError: true })
    expect(await call('tasks/get', { taskId: toolError.taskId })).toMatchObject({ status: 'failed' })
  })

  it("lists the session's own tasks a page at a time; another session finds none of them", async () => {
    const { server } = makeServer({ tasks: { store: undefined } })
    const first = await openLegacy(server)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push(((await first.call('tools/call', { name: 'quick', arguments: {}, task: {} })).task as { taskId: string }).taskId)
    const listed = await first.call('tasks/list') as { tasks: Array<{ taskId: string }> }
    expect(listed.tasks.map(task => task.taskId)).toEqual(ids)
    const second = await openLegacy(server)
    expect((await second.call('tasks/list') as { tasks: unknown[] }).tasks).toEqual([])
    expect((await second.failure('tasks/get', { taskId: ids[0]! })).code).toBe(ErrorCode.InvalidParams)
    expect((await second.failure('tasks/cancel', { taskId: ids[0]! })).code).toBe(ErrorCode.InvalidParams)
    expect((await first.failure('tasks/list', { cursor: 'not-a-cursor' })).code).toBe(ErrorCode.InvalidParams)
  })

  it('keeps tasks reachable across POSTs of a stateless HTTP server (no session to bind them to)', async () => {
    const { server } = makeServer()
    const http = streamableHttp({ port: 0, stateless: true })
    await server.listen(http)
    const post = async (id: number, method: string, params: JsonObject) => {
      const response = await fetch(http.url!, {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      })
      const text = await response.text()
      const data = text.startsWith('{') ? text : text.split('\n').find(line => line.startsWith('data:'))!.slice(5)
      return (JSON.parse(data) as { result: JsonObject }).result
    }
    const { task } = await post(1, 'tools/call', { name: 'quick', arguments: {}, task: {} }) as { task: { taskId: string } }
    expect(await post(2, 'tasks/result', { taskId: task.taskId })).toMatchObject(text('quick'))
  })

  it('refuses a task past the store\'s limit with -32603 naming it, and runs nothing', async () => {
    const { server, slowGate } = makeServer({ tasks: { store: createMemoryTaskStore({ maxTasksPerOwner: 2 }) } })
    const { call, failure } = await openLegacy(server)
    await call('tools/call', { name: 'slow', arguments: {}, task: {} })
    await call('tools/call', { name: 'slow', arguments: {}, task: {} })
    const refusal = await failure('tools/call', { name: 'slow', arguments: {}, task: {} })
    expect(refusal.code).toBe(ErrorCode.InternalError)
    expect(refusal.data).toEqual({ limit: 2, scope: 'owner' })
    expect((await call('tasks/list') as { tasks: unknown[] }).tasks).toHaveLength(2)
    slowGate.open()
  })

  it("asks the client to run an elicitation as a task: params.task out, then tasks/result for the client's answer", async () => {
    const { server } = makeServer()
    const client = await openLegacy(server, { elicitation: { form: {} }, tasks: { requests: { elicitation: { create: {} } } } })
    const seen: Array<{ method: string; params: JsonObject | undefined }> = []
    client.raw.setRequestHandler('elicitation/create', params => {
      seen.push({ method: 'elicitation/create', params })
      return { task: { taskId: 'client-task-1', status: 'working', createdAt: new Date(0).toISOString(), lastUpdatedAt: new Date(0).toISOString(), ttl: 5000 } }
    })
    client.raw.setRequestHandler('tasks/result', params => {
      seen.push({ method: 'tasks/result', params })
      return { action: 'accept', content: { name: 'Mo' }, _meta: { [RELATED]: { taskId: 'client-task-1' } } }
    })
    expect(await client.call('tools/call', { name: 'asks_as_task', arguments: {} })).toEqual(text("the client's task said Mo"))
    expect(seen.map(entry => entry.method)).toEqual(['elicitation/create', 'tasks/result'])
    expect(seen[0]!.params?.task).toEqual({ ttl: 5000 })
    expect(seen[1]!.params).toMatchObject({ taskId: 'client-task-1' })
    const undeclared = await openLegacy(server, { elicitation: { form: {} } })
    expect(await undeclared.call('tools/call', { name: 'asks_as_task', arguments: {} })).toMatchObject({ isError: true })
  })

  it('asks the client inside a task: input_required meanwhile, the related-task _meta on the request', async () => {
    const { server } = makeServer()
    const client = await openLegacy(server, { elicitation: { form: {} } })
    const asked = new Subject<JsonObject | undefined>()
    const answer = gate()
    client.raw.setRequestHandler('elicitation/create', async params => {
      asked.next(params)
      await answer.opened
      return { action: 'accept', content: { name: 'Ada' } }
    })
    const seen = firstValueFrom(asked)
    const { task } = await client.call('tools/call', { name: 'asks', arguments: {}, task: {} }) as { task: { taskId: string } }
    const params = await seen
    expect((params?._meta as JsonObject)[RELATED]).toEqual({ taskId: task.taskId })
    expect(await client.call('tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'input_required' })
    answer.open()
    expect(await client.call('tasks/result', { taskId: task.taskId })).toMatchObject(text('hello Ada'))
  })
})

describe('tasks, modern era (io.modelcontextprotocol/tasks)', () => {
  it('declares the extension in server/discover, not the legacy tasks capability', async () => {
    const { server } = makeServer()
    const { call } = await open(server)
    const { capabilities } = await call('server/discover', { _meta: modernMeta() }) as { capabilities: JsonObject }
    expect((capabilities.extensions as JsonObject)[TASKS]).toEqual({})
    expect(capabilities.tasks).toBeUndefined()
  })

  it('answers resultType "task" to a client that declared the extension, and tasks/get inlines the result', async () => {
    const { server, slowGate, reached } = makeServer()
    const { call } = await open(server)
    const created = await call('tools/call', { name: 'slow', arguments: {}, _meta: modernMeta() })
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 900_000, pollIntervalMs: 1000 })
    expect(created).not.toHaveProperty('ttl')
    expect(created).not.toHaveProperty('requestState')
    const taskId = created.taskId as string
    expect(await call('tasks/get', { taskId, _meta: modernMeta() })).toMatchObject({ resultType: 'complete', status: 'working', statusMessage: 'waiting for the gate' })
    slowGate.open()
    await reached(taskId, 'completed')
    expect(await call('tasks/get', { taskId, _meta: modernMeta() })).toMatchObject({ status: 'completed', result: text('slow done') })
  })

  it('runs a plain call for a client without the extension, and refuses a required tool with -32021', async () => {
    const { server } = makeServer()
    const { call, failure } = await open(server)
    expect(await call('tools/call', { name: 'quick', arguments: {}, _meta: modernMeta({}) })).toMatchObject({ resultType: 'complete', ...text('quick') })
    const refusal = await failure('tools/call', { name: 'only_task', arguments: {}, _meta: modernMeta({}) })
    expect(refusal.code).toBe(-32021)
    expect(refusal.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } })
  })

  it('keeps a tool error a completed task, and a JSON-RPC error a failed one', async () => {
    const { server, reached } = makeServer()
    const { call } = await open(server)
    const toolError = await call('tools/call', { name: 'tool_error', arguments: {}, _meta: modernMeta() })
    await reached(toolError.taskId as string, 'completed')
    expect(await call('tasks/get', { taskId: toolError.taskId as string, _meta: modernMeta() })).toMatchObject({ status: 'completed', result: { isError: true } })
    const broken = await call('tools/call', { name: 'broken', arguments: {}, _meta: modernMeta() })
    await reached(broken.taskId as string, 'failed')
    expect(await call('tasks/get', { taskId: broken.taskId as string, _meta: modernMeta() }))
      .toMatchObject({ status: 'failed', error: { code: ErrorCode.InvalidParams, message: 'Invalid params: broken on purpose' } })
  })

  it('asks for input inside the task: input_required with inputRequests, tasks/update answers, the handler goes on', async () => {
    const { server, reached } = makeServer()
    const { call, failure } = await open(server)
    const meta = modernMeta({ extensions: { [TASKS]: {} }, elicitation: { form: {} } })
    const { taskId } = await call('tools/call', { name: 'asks', arguments: {}, _meta: meta }) as { taskId: string }
    await reached(taskId, 'input_required')
    const waiting = await call('tasks/get', { taskId, _meta: meta })
    const inputRequests = waiting.inputRequests as Record<string, { method: string }>
    const [key] = Object.keys(inputRequests)
    expect(inputRequests[key!]!.method).toBe('elicitation/create')
    expect((await failure('tasks/update', { taskId, inputResponses: { [key!]: { action: 'maybe' } }, _meta: meta })).code).toBe(ErrorCode.InvalidParams)
    expect(await call('tasks/update', { taskId, inputResponses: { unknown: {}, [key!]: { action: 'accept', content: { name: 'Lin' } } }, _meta: meta })).toMatchObject({ resultType: 'complete' })
    await reached(taskId, 'completed')
    expect(await call('tasks/get', { taskId, _meta: meta })).toMatchObject({ status: 'completed', result: text('hello Lin') })
  })

  it('shows every outstanding input request; a partial answer keeps the task input_required with the rest', async () => {
    const { server, reached } = makeServer()
    const { call } = await open(server)
    const meta = modernMeta({ extensions: { [TASKS]: {} }, elicitation: { form: {} } })
    const { taskId } = await call('tools/call', { name: 'asks_two', arguments: {}, _meta: meta }) as { taskId: string }
    await reached(taskId, 'input_required')
    const waiting = await call('tasks/get', { taskId, _meta: meta })
    const keys = Object.keys(waiting.inputRequests as JsonObject)
    expect(keys).toHaveLength(2)
    await call('tasks/update', { taskId, inputResponses: { [keys[0]!]: { action: 'accept', content: { name: 'one' } } }, _meta: meta })
    const partial = await call('tasks/get', { taskId, _meta: meta })
    expect(partial.status).toBe('input_required')
    expect(Object.keys(partial.inputRequests as JsonObject)).toEqual([keys[1]])
    await call('tasks/update', { taskId, inputResponses: { [keys[1]!]: { action: 'accept', content: { name: 'two' } } }, _meta: meta })
    await reached(taskId, 'completed')
    expect(await call('tasks/get', { taskId, _meta: meta })).toMatchObject({ status: 'completed', result: text('one and two') })
  })

  it('gathers input with an MRTR round first, then escalates to a task (taskStart: handler)', async () => {
    const { server, reached } = makeServer()
    const { call } = await open(server)
    const meta = modernMeta({ extensions: { [TASKS]: {} }, elicitation: { form: {} } })
    const first = await call('tools/call', { name: 'mrtr_then_task', arguments: {}, _meta: meta })
    expect(first.resultType).toBe('input_required')
    expect(first).not.toHaveProperty('taskId')
    const [key] = Object.keys(first.inputRequests as JsonObject)
    const second = await call('tools/call', {
      name: 'mrtr_then_task', arguments: {}, _meta: meta, requestState: first.requestState as string,
      inputResponses: { [key!]: { action: 'accept', content: { user_name: 'Kim' } } },
    })
    expect(second).toMatchObject({ resultType: 'task', status: 'working' })
    expect(second).not.toHaveProperty('requestState')
    await reached(second.taskId as string, 'completed')
    expect(await call('tasks/get', { taskId: second.taskId as string, _meta: meta })).toMatchObject({ status: 'completed', result: text('task for Kim (in task)') })
  })

  it('sends notifications/tasks on a listen stream for the task ids asked, and -32021 without the extension', async () => {
    const { server, slowGate } = makeServer()
    const { raw, call, failure } = await open(server)
    const { taskId } = await call('tools/call', { name: 'slow', arguments: {}, _meta: modernMeta() }) as { taskId: string }
    const seen = notifications(raw, 'notifications/tasks')
    const acknowledged = notifications(raw, 'notifications/subscriptions/acknowledged')
    const stream = raw.request('subscriptions/listen', { notifications: { taskIds: [taskId] }, _meta: modernMeta() }, { progress: false, timeout: 0 }).subscribe()
    cleanups.push(async () => stream.unsubscribe())
    expect((await acknowledged.until(() => true)).notifications).toEqual({ taskIds: [taskId] })
    slowGate.open()
    const done = await seen.until(params => params.status === 'completed')
    expect(done).toMatchObject({ taskId, result: text('slow done') })
    expect((await failure('subscriptions/listen', { notifications: { taskIds: [taskId] }, _meta: modernMeta({}) })).code).toBe(-32021)
  })

  it('acknowledges tasks/cancel and settles the task cancelled; tasks/result and tasks/list are not of this era', async () => {
    const { server, aborted } = makeServer()
    const { call, failure } = await open(server)
    const { taskId } = await call('tools/call', { name: 'slow', arguments: {}, _meta: modernMeta() }) as { taskId: string }
    expect(await call('tasks/cancel', { taskId, _meta: modernMeta() })).toMatchObject({ resultType: 'complete' })
    expect(aborted).toEqual([taskId])
    expect(await call('tasks/get', { taskId, _meta: modernMeta() })).toMatchObject({ status: 'cancelled' })
    expect((await failure('tasks/get', { taskId: 'nope', _meta: modernMeta() })).code).toBe(ErrorCode.InvalidParams)
    expect((await failure('tasks/result', { taskId, _meta: modernMeta() })).code).toBe(ErrorCode.MethodNotFound)
    expect((await failure('tasks/list', { _meta: modernMeta() })).code).toBe(ErrorCode.MethodNotFound)
  })
})
