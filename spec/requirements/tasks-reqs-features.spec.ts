import { afterEach, describe, expect } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { verifies } from '../helpers/verifies.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect, type ClientOptions, type McpClient } from '../../actors/client.ts'
import { createConnection, type Connection } from '../../lib/connection.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, InvalidParamsError, McpError } from '../../lib/jsonrpc/errors.ts'
import type { CallToolResult, CreateMessageResult } from '../../lib/schema/types.ts'

/**
 * MCP 2025-11-25 tasks, each side of rxmcp: a request of a type the receiver declared no tasks for
 * is processed normally, its task metadata ignored; tasks/get, tasks/result and tasks/cancel name
 * their task by `taskId` alone, whatever related-task `_meta` they carry; and the client hands
 * tasks/list cursors back as the exact strings the server gave.
 */

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); cleanups = [] })

const RELATED = 'io.modelcontextprotocol/related-task'
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] })

type Answer = { result?: JsonObject; error?: { code: number; message: string } }

/** A legacy (2025-11-25) session over real Streamable HTTP (JSON answers): `call` sends a request in it. */
async function legacySession(server: McpServer): Promise<{ capabilities: JsonObject; call: (id: number, method: string, params?: JsonObject) => Promise<Answer> }> {
  const http = streamableHttp({ jsonResponse: true })
  await server.listen(http)
  cleanups.push(() => server.close())
  const post = async (headers: Record<string, string>, message: JsonObject) => {
    const response = await fetch(http.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    })
    const body = await response.text()
    return { headers: response.headers, body: (body === '' ? {} : JSON.parse(body)) as Answer }
  }
  const opened = await post({}, { id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
  await post(session, { method: 'notifications/initialized' })
  return {
    capabilities: opened.body.result!.capabilities as JsonObject,
    call: async (id, method, params = {}) => (await post(session, { id, method, params })).body,
  }
}

/** The rxmcp client (legacy era) of a raw JSON-RPC server over a memory pair: the server sends what the test writes. */
async function clientOfRawServer(options: ClientOptions, handlers: Record<string, (params: JsonObject | undefined) => unknown> = {}): Promise<{ client: McpClient; ask: (method: string, params?: JsonObject) => Promise<JsonObject> }> {
  const [near, far] = createMemoryPair()
  const server: Connection = createConnection(far)
  server.setRequestHandler('initialize', () => ({ protocolVersion: '2025-11-25', capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, serverInfo: { name: 'raw', version: '1' } }))
  for (const [method, handler] of Object.entries(handlers)) server.setRequestHandler(method, handler)
  server.start()
  const client = await connect(near, { name: 'spec', version: '1' }, { era: 'legacy', ...options })
  cleanups.push(() => server.close(), () => client.close())
  return { client, ask: (method, params) => firstValueFrom(server.request(method, params, { progress: false, timeout: 0 }).pipe(resultOf())) }
}

/** A promise the test settles when it wants. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>(resolve => { open = resolve })
  return { opened, open }
}

const SAMPLED: CreateMessageResult = { role: 'assistant', model: 'm', content: { type: 'text', text: 'sampled' } }
const SAMPLE_PARAMS = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }

describe('MCP 2025-11-25 tasks', () => {
  verifies('tasks:undeclared-normal', 'a request with task metadata of a type the receiver declared no tasks for is processed normally: server (over HTTP) and client', async () => {
    // A server that runs no tasks: no tasks capability, and a tools/call with params.task is a plain call.
    const plain = createServer({ name: 'plain', version: '1' })
    plain.tool('echo', {}, () => text('echoed'))
    const without = await legacySession(plain)
    expect(without.capabilities.tasks).toBeUndefined()
    expect((await without.call(1, 'tools/call', { name: 'echo', arguments: {}, task: { ttl: 60_000 } })).result).toEqual(text('echoed'))

    // A server that declares tasks for tools/call only: a prompts/get with params.task is a plain
    // prompts/get even when its handler offers to run as a task.
    const tasked = createServer({ name: 'tasked', version: '1' })
    tasked.tool('slow', { execution: { taskSupport: 'optional' } }, () => text('slow done'))
    tasked.prompt('review', {}, (_args, ctx) => ctx.runAsTask(() => ({ messages: [{ role: 'user', content: { type: 'text', text: 'Review this' } }] })))
    const withTasks = await legacySession(tasked)
    expect(withTasks.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } })
    expect((await withTasks.call(2, 'prompts/get', { name: 'review', task: { ttl: 60_000 } })).result).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'Review this' } }] })
    expect((await withTasks.call(3, 'tasks/list')).result?.tasks).toEqual([])

    // A client: without `tasks`, a sampling request with params.task is answered with its result;
    // with `tasks` (declared for sampling), a roots/list with params.task is answered with the roots.
    const sampling = () => SAMPLED
    const { ask: askPlain } = await clientOfRawServer({ sampling })
    expect(await askPlain('sampling/createMessage', { ...SAMPLE_PARAMS, task: { ttl: 60_000 } })).toEqual(SAMPLED)
    const roots = [{ uri: 'file:///home/ada', name: 'home' }]
    const { ask: askTasked } = await clientOfRawServer({ sampling, roots, tasks: true })
    expect(await askTasked('roots/list', { task: { ttl: 60_000 } })).toEqual({ roots })
    expect(await askTasked('sampling/createMessage', { ...SAMPLE_PARAMS, task: { ttl: 60_000 } })).toMatchObject({ task: { status: 'working' } })
  })

  verifies('tasks:task-id-param', 'tasks/get, tasks/result and tasks/cancel act on the task their taskId names, ignoring a related-task _meta naming another: server (over HTTP) and client', async () => {
    const gates = new Map<string, ReturnType<typeof gate>>([['a', gate()], ['b', gate()]])
    const server = createServer({ name: 'tasks', version: '1' })
    server.tool('slow', { execution: { taskSupport: 'optional' }, inputSchema: { type: 'object', properties: { id: { type: 'string' } } } }, async ({ id }) => {
      await gates.get(id as string)!.opened
      return text(`done ${String(id)}`)
    })
    const { call } = await legacySession(server)
    const a = ((await call(1, 'tools/call', { name: 'slow', arguments: { id: 'a' }, task: {} })).result!.task as JsonObject).taskId as string
    const b = ((await call(2, 'tools/call', { name: 'slow', arguments: { id: 'b' }, task: {} })).result!.task as JsonObject).taskId as string
    const naming = (taskId: string) => ({ [RELATED]: { taskId } })
    expect((await call(3, 'tasks/get', { taskId: a, _meta: naming(b) })).result).toMatchObject({ taskId: a, status: 'working' })
    expect((await call(4, 'tasks/cancel', { taskId: a, _meta: naming(b) })).result).toMatchObject({ taskId: a, status: 'cancelled' })
    expect((await call(5, 'tasks/get', { taskId: b, _meta: naming(a) })).result).toMatchObject({ taskId: b, status: 'working' })
    const result = call(6, 'tasks/result', { taskId: b, _meta: naming(a) })
    gates.get('b')!.open()
    expect((await result).result).toMatchObject(text('done b'))
    // A related-task _meta alone names nothing: the taskId is required.
    expect((await call(7, 'tasks/get', { _meta: naming(b) })).error?.code).toBe(ErrorCode.InvalidParams)

    // The client as the receiver of the server's task-augmented sampling.
    const held = gate()
    const { ask } = await clientOfRawServer({ tasks: true, sampling: async () => { await held.opened; return SAMPLED } })
    const x = ((await ask('sampling/createMessage', { ...SAMPLE_PARAMS, task: {} })).task as JsonObject).taskId as string
    const y = ((await ask('sampling/createMessage', { ...SAMPLE_PARAMS, task: {} })).task as JsonObject).taskId as string
    expect(await ask('tasks/get', { taskId: x, _meta: naming(y) })).toMatchObject({ taskId: x, status: 'working' })
    expect(await ask('tasks/cancel', { taskId: y, _meta: naming(x) })).toMatchObject({ taskId: y, status: 'cancelled' })
    expect(await ask('tasks/get', { taskId: x, _meta: naming(y) })).toMatchObject({ taskId: x, status: 'working' })
    const sampled = ask('tasks/result', { taskId: x, _meta: naming(y) })
    held.open()
    expect(await sampled).toMatchObject(SAMPLED)
    const refusal = await ask('tasks/get', { _meta: naming(x) }).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(InvalidParamsError)
  })

  verifies('tasks:list-opaque-cursor', 'the client hands a tasks/list cursor back as the exact string the server gave, never parsed or changed', async () => {
    const cursor = 'page 2/==+ü%2F?x=1&y'
    const asked: unknown[] = []
    const task = (taskId: string) => ({ taskId, status: 'working', createdAt: '2025-01-01T00:00:00Z', lastUpdatedAt: '2025-01-01T00:00:00Z', ttl: null })
    const { client } = await clientOfRawServer({}, {
      'tasks/list': params => {
        asked.push(params?.cursor)
        if (params?.cursor === undefined) return { tasks: [task('t1')], nextCursor: cursor }
        if (params.cursor === cursor) return { tasks: [task('t2')] }
        throw new InvalidParamsError('Invalid params: unknown cursor')
      },
    })
    const first = await client.tasks.list()
    expect(first).toMatchObject({ tasks: [{ taskId: 't1' }], nextCursor: cursor })
    const second = await client.tasks.list(first.nextCursor)
    expect(second.tasks.map(each => each.taskId)).toEqual(['t2'])
    expect(second.nextCursor).toBeUndefined()
    expect(asked).toEqual([undefined, cursor])
    await expect(client.tasks.list(`${cursor} `)).rejects.toBeInstanceOf(McpError)
  })
})
