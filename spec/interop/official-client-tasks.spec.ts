import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { arrivals } from '../helpers/arrivals.ts'
import { taskChanges } from '../helpers/task-changes.ts'

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

/** Gates the tests open to let the `slow` tool finish, one per call. */
const gates = arrivals<() => void>()
/** Task ids whose handler saw its signal abort. */
const aborted: string[] = []

function makeServer(): McpServer {
  const server = createServer({ name: 'rxmcp-tasks', version: '1.0.0' })
  server.tool('slow', { description: 'Waits until the test lets it finish', execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    ctx.signal.addEventListener('abort', () => aborted.push(ctx.task!.taskId))
    ctx.task?.setStatusMessage('waiting')
    await new Promise<void>(resolve => gates.push(resolve))
    return text('slow done')
  })
  server.tool('must_task', { execution: { taskSupport: 'required' } }, () => text('ran as a task'))
  server.tool('asks', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return text(`hello ${String(answer.content?.name)}`)
  })
  server.tool('fails', { execution: { taskSupport: 'optional' } }, () => ({ ...text('it failed'), isError: true }))
  return server
}

describe('the official SDK v1.32 client\'s experimental tasks against an rxmcp server over Streamable HTTP', () => {
  let server: McpServer
  let http: StreamableHttpServer
  let client: Client

  beforeAll(async () => {
    server = makeServer()
    http = streamableHttp({ port: 0 })
    await server.listen(http)
    client = new Client({ name: 'official-tasks', version: '1' }, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }))
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url!)))
  })

  afterAll(async () => {
    await client?.close()
    await server?.close()
  })

  it('sees the tasks capability and the tools\' taskSupport', async () => {
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } }, list: {}, cancel: {} })
    const { tools } = await client.listTools()
    expect(tools.find(tool => tool.name === 'must_task')?.execution).toEqual({ taskSupport: 'required' })
  })

  it('streams a task-augmented call: taskCreated, then the result', async () => {
    const stream = client.experimental.tasks.callToolStream({ name: 'must_task', arguments: {} }, CallToolResultSchema, { task: { ttl: 60_000 } })
    const types: string[] = []
    let result: unknown
    for await (const message of stream) {
      types.push(message.type)
      if (message.type === 'taskCreated') expect(message.task).toMatchObject({ status: 'working', ttl: 60_000 })
      if (message.type === 'result') result = message.result
      if (message.type === 'error') throw message.error
    }
    expect(types[0]).toBe('taskCreated')
    expect(types.at(-1)).toBe('result')
    expect(result).toMatchObject(text('ran as a task'))
  })

  it('polls with getTask, lists with listTasks, and reads the result with getTaskResult', async () => {
    const changes = taskChanges(server)
    const created = await client.request({ method: 'tools/call', params: { name: 'slow', arguments: {}, task: {} } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema)
    const taskId = created.task.taskId
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'working', statusMessage: 'waiting' })
    expect((await client.experimental.tasks.listTasks()).tasks.map(task => task.taskId)).toContain(taskId)
    await gates.atLeast(1)
    gates.items.shift()!()
    // The task's change to completed is published on the server's bus: then getTask says so.
    await changes.reached(taskId, 'completed')
    changes.stop()
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' })
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toMatchObject(text('slow done'))
  })

  it('cancels a running task: cancelled at once, the handler aborted, a second cancel refused', async () => {
    const created = await client.request({ method: 'tools/call', params: { name: 'slow', arguments: {}, task: {} } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema)
    const taskId = created.task.taskId
    const cancelled = await client.experimental.tasks.cancelTask(taskId)
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' })
    expect(aborted).toContain(taskId)
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled')
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 })
    gates.items.splice(0).forEach(open => open())
  })

  it('answers an elicitation the task sends, and ends the task with its answer', async () => {
    const stream = client.experimental.tasks.callToolStream({ name: 'asks', arguments: {} }, CallToolResultSchema, { task: {} })
    let result: unknown
    for await (const message of stream) {
      if (message.type === 'result') result = message.result
      if (message.type === 'error') throw message.error
    }
    expect(result).toMatchObject(text('hello Grace'))
  })

  it('reports a failed tool result as a failed task, whose result is the tool\'s error result', async () => {
    const stream = client.experimental.tasks.callToolStream({ name: 'fails', arguments: {} }, CallToolResultSchema, { task: {} })
    let taskId: string | undefined
    let outcome: unknown
    for await (const message of stream) {
      if (message.type === 'taskCreated') taskId = message.task.taskId
      if (message.type === 'result') outcome = message.result
      if (message.type === 'error') outcome = message.error
    }
    // The SDK ends its stream with an error for a failed task; tasks/result still has the tool's result.
    expect(outcome).toBeInstanceOf(Error)
    expect((await client.experimental.tasks.getTask(taskId!)).status).toBe('failed')
    expect(await client.experimental.tasks.getTaskResult(taskId!, CallToolResultSchema)).toMatchObject({ isError: true, ...text('it failed') })
  })

  it('refuses a task-less call of a tool that requires one with -32601', async () => {
    // client.callTool refuses locally (-32600) once it has seen the listing; a plain request reaches the server.
    await expect(client.request({ method: 'tools/call', params: { name: 'must_task', arguments: {} } }, CallToolResultSchema)).rejects.toMatchObject({ code: -32601 })
  })
})
