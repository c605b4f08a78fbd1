import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request as httpRequest } from 'node:http'
import { createServer, type McpServer, type ServerOptions } from '../../actors/server.ts'
import { createMemoryTaskStore, type TaskCreate, type TaskStore } from '../../actors/tasks/store.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { streamableHttp, type StreamableHttpOptions } from '../../transports/streamable-http.ts'
import { connectRedis, type RedisLike } from '../../transports/redis.ts'
import { redisTaskStore } from '../../transports/redis-task-store.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { arrivals } from '../helpers/arrivals.ts'
import { taskChanges } from '../helpers/task-changes.ts'
import { cleanupsAfterEach } from '../helpers/cleanups.ts'

/*
 * Issue 20, findings 2 and 6, over a real HTTP listener on 127.0.0.1: who may read a task, and what
 * bounds the tasks anonymous clients can make. Clients come from distinct loopback addresses
 * (127.0.0.2, 127.0.0.3, ...: Linux routes all of 127/8 to lo), so the listener sees distinct
 * remote addresses as it would for distinct hosts.
 */

const LEGACY = '2025-11-25'
const MODERN = '2026-07-28'
const TASKS = 'io.modelcontextprotocol/tasks'
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

let redisServer: TestRedis
let redis: RedisLike & { close(): Promise<unknown> }
let prefixCount = 0
beforeAll(async () => {
  redisServer = await startRedis()
  redis = await connectRedis(redisServer.url)
}, 30_000)
afterAll(async () => {
  await redis?.close()
  await redisServer?.stop()
})

const { cleanups, unhandled } = cleanupsAfterEach()

/** The task stores under test: the memory one, and the Redis one on a real redis-server. */
const STORES: Array<[string, (limits: { maxTasksPerAddress?: number; maxTasksPerOwner?: number }) => TaskStore]> = [
  ['memory store', limits => createMemoryTaskStore(limits)],
  ['Redis store', limits => redisTaskStore(redis, { prefix: `iso${++prefixCount}:`, ...limits })],
]

/** A store that remembers what it was asked to create (owner and id), to read the store the server used. */
function recording(store: TaskStore) {
  const created: Array<{ taskId: string; owner: string }> = []
  // The ids of the tasks deleted, as they are.
  const deleted = arrivals<string>()
  const wrapped: TaskStore = {
    async create(init: TaskCreate) {
      const task = await store.create(init)
      created.push({ taskId: task.taskId, owner: task.owner })
      return task as never
    },
    get: (taskId, owner) => store.get(taskId, owner),
    update: state => store.update(state),
    list: (owner, cursor) => store.list(owner, cursor),
    delete: async (taskId, owner) => {
      const isDeleted = await store.delete(taskId, owner)
      if (isDeleted) deleted.push(taskId)
      return isDeleted
    },
    close: () => store.close(),
  }
  return { store: wrapped, created, deleted }
}

/**
 * A server whose `job` tool runs as a task: `secret` answers at once with its argument; `forever`
 * runs until its signal aborts (recorded in `aborted`).
 */
async function serve(options: ServerOptions, http: StreamableHttpOptions) {
  const server: McpServer = createServer({ name: 'isolation', version: '1.0.0' }, { reportUnhandledError: error => unhandled.push(error), ...options })
  // The `forever` tasks whose signal aborted, and those running, as it happens.
  const aborted = arrivals<string>()
  const running = arrivals<string>()
  const { reached } = taskChanges(server)
  server.tool('secret', { execution: { taskSupport: 'optional' }, inputSchema: { type: 'object', properties: { value: { type: 'string' } } } },
    args => text(`the secret is ${String((args as { value?: string }).value)}`))
  server.tool('forever', { execution: { taskSupport: 'optional' } }, (_args, ctx) => new Promise(() => {
    running.push(ctx.task?.taskId ?? '?')
    ctx.signal.addEventListener('abort', () => aborted.push(ctx.task?.taskId ?? '?'))
  }))
  const listener = streamableHttp({ port: 0, host: '127.0.0.1', ...http })
  await server.listen(listener)
  cleanups.push(() => server.close())
  return { server, url: new URL(listener.url!), aborted: aborted.items, running: running.items, whenAborted: aborted.atLeast, reached }
}

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; message: JsonObject | undefined }

/** One HTTP request from `from` (a loopback address), answered with its status and JSON-RPC message (JSON or the last SSE message). */
function send(url: URL, from: string, method: 'POST' | 'DELETE', body: JsonObject | undefined, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = httpRequest({
      host: '127.0.0.1', port: url.port, path: url.pathname, method, localAddress: from,
      headers: { accept: 'application/json, text/event-stream', ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    }, res => {
      let data = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { data += chunk })
      res.on('end', () => {
        let message: JsonObject | undefined
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          const messages = data.split('\n').filter(line => line.startsWith('data: ') && line.length > 6).map(line => JSON.parse(line.slice(6)) as JsonObject)
          message = messages.filter(one => 'id' in one).at(-1)
        } else if (data !== '') {
          message = JSON.parse(data) as JsonObject
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, message })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

let nextId = 1
/** A JSON-RPC request body. */
const rpc = (method: string, params: JsonObject = {}) => ({ jsonrpc: '2.0', id: nextId++, method, params })
const modernMeta = () => ({ [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: { extensions: { [TASKS]: {} } }, [MetaKey.clientInfo]: { name: 'raw', version: '1' } })

/** A legacy (2025-11-25) request without a session: what a client of a stateless listener sends. */
async function legacyStateless(url: URL, from: string, method: string, params: JsonObject = {}) {
  const answer = await send(url, from, 'POST', rpc(method, params), { 'mcp-protocol-version': LEGACY })
  return answer.message!
}

/** A modern-era (2026-07-28) request: no session, its version and capabilities in `_meta`. */
async function modern(url: URL, from: string, method: string, params: JsonObject = {}) {
  // SEP-2243: Mcp-Name names the tool of a tools/call, the task of a tasks/* request.
  const name = params.name ?? params.taskId
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(typeof name === 'string' ? { 'mcp-name': name } : {}) }
  const answer = await send(url, from, 'POST', rpc(method, { ...params, _meta: modernMeta() }), headers)
  return answer.message!
}

/** A legacy session from `from`: initialize, then requests on the session. */
async function legacySession(url: URL, from: string) {
  const init = await send(url, from, 'POST', rpc('initialize', { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'raw', version: '1' } }))
  const sessionId = String(init.headers['mcp-session-id'])
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY }
  await send(url, from, 'POST', { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)
  return {
    sessionId,
    call: async (method: string, params: JsonObject = {}) => (await send(url, from, 'POST', rpc(method, params), headers)).message!,
    end: () => send(url, from, 'DELETE', undefined, headers),
  }
}

describe('issue 20: A stateless legacy server leaks tasks between anonymous clients', () => {
  it('stateless legacy HTTP: client B lists none of client A\'s tasks and cannot read one without its id; A reads its own by id', async () => {
    const { url, reached } = await serve({}, { stateless: true })
    const created = await legacyStateless(url, '127.0.0.2', 'tools/call', { name: 'secret', arguments: { value: 'of A' }, task: {} })
    const taskId = ((created.result as JsonObject).task as JsonObject).taskId as string
    expect(taskId).toMatch(/^[\w-]{22,}$/)
    // B, anonymous too, from another address: it can prove it owns nothing, so it is shown nothing.
    expect(await legacyStateless(url, '127.0.0.3', 'tasks/list')).toMatchObject({ result: { tasks: [] } })
    // So are anonymous callers from A's own address: nothing ties two stateless exchanges together.
    expect(await legacyStateless(url, '127.0.0.2', 'tasks/list')).toMatchObject({ result: { tasks: [] } })
    // Without the id there is nothing to read: a guessed id is not found.
    expect(await legacyStateless(url, '127.0.0.3', 'tasks/result', { taskId: 'AAAAAAAAAAAAAAAAAAAAAA' })).toMatchObject({ error: { code: -32602 } })
    // The id is the capability: A (a new exchange, nothing else shared) reads its task and result with it.
    await reached(taskId, 'completed')
    expect((await legacyStateless(url, '127.0.0.2', 'tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'completed' })
    expect(await legacyStateless(url, '127.0.0.2', 'tasks/result', { taskId })).toMatchObject({ result: text('the secret is of A') })
  })

  it('a legacy session\'s task is invisible to other sessions and to sessionless callers, even with its id', async () => {
    const { url, reached } = await serve({}, {})
    const a = await legacySession(url, '127.0.0.2')
    const created = await a.call('tools/call', { name: 'secret', arguments: { value: 'of session A' }, task: {} })
    const taskId = ((created.result as JsonObject).task as JsonObject).taskId as string
    const b = await legacySession(url, '127.0.0.2')
    expect(await b.call('tasks/list')).toMatchObject({ result: { tasks: [] } })
    expect(await b.call('tasks/get', { taskId })).toMatchObject({ error: { code: -32602 } })
    expect(await modern(url, '127.0.0.2', 'tasks/get', { taskId })).toMatchObject({ error: { code: -32602 } })
    await reached(taskId, 'completed')
    expect((await a.call('tasks/get', { taskId })).result).toMatchObject({ status: 'completed' })
    expect(((await a.call('tasks/list')).result as { tasks: JsonObject[] }).tasks.map(task => task.taskId)).toEqual([taskId])
  })

  it('modern era: an anonymous task is reached by its id alone, and tasks/list does not exist', async () => {
    const { url, reached } = await serve({}, {})
    const created = await modern(url, '127.0.0.2', 'tools/call', { name: 'secret', arguments: { value: 'of A' } })
    const taskId = (created.result as JsonObject).taskId as string
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' })
    // Whoever holds the id (here another client) may poll it: MCP 2026-07-28 tasks extension, "Task ID unguessability".
    await reached(taskId, 'completed')
    expect((await modern(url, '127.0.0.3', 'tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'completed', result: text('the secret is of A') })
    expect(await modern(url, '127.0.0.3', 'tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAA' })).toMatchObject({ error: { code: -32602 } })
    expect(await modern(url, '127.0.0.3', 'tasks/list')).toMatchObject({ error: { code: -32601 } })
    // A legacy session cannot reach it with the id either: it is not the session's.
    const session = await legacySession(url, '127.0.0.2')
    expect(await session.call('tasks/get', { taskId })).toMatchObject({ error: { code: -32602 } })
  })
})

describe('issue 20: Task store exhaustion', () => {
  it('caps retention: 15 minutes when none is asked for, at most 1 hour', async () => {
    const store = createMemoryTaskStore()
    expect((await store.create({ owner: 'o' })).ttlMs).toBe(15 * 60_000)
    expect((await store.create({ owner: 'o', ttlMs: 24 * 3_600_000 })).ttlMs).toBe(3_600_000)
    expect((await store.create({ owner: 'o', ttlMs: null })).ttlMs).toBe(15 * 60_000)
    await store.close()
  })

  describe.each(STORES)('with the %s', (_name, makeStore) => {
    it('a session\'s tasks are cancelled and removed from the store when it is DELETEd', async () => {
      const { store, created, deleted } = recording(makeStore({}))
      const { url, aborted, running, whenAborted } = await serve({ tasks: { store } }, {})
      const session = await legacySession(url, '127.0.0.2')
      for (let i = 0; i < 3; i++) await session.call('tools/call', { name: 'forever', arguments: {}, task: {} })
      await session.call('tools/call', { name: 'secret', arguments: { value: 'done' }, task: {} })
      // A task's work starts before its CreateTaskResult goes out.
      expect(running).toHaveLength(3)
      expect(created).toHaveLength(4)
      for (const { taskId, owner } of created) expect(await store.get(taskId, owner)).toBeDefined()
      expect((await session.end()).status).toBe(200)
      // Every handler is stopped, and the store holds none of the session's tasks, finished or not.
      await whenAborted(3)
      expect([...aborted].sort()).toEqual([...running].sort())
      expect([...await deleted.atLeast(4)].sort()).toEqual(created.map(({ taskId }) => taskId).sort())
      expect((await Promise.all(created.map(({ taskId, owner }) => store.get(taskId, owner)))).filter(Boolean)).toEqual([])
    })

    it('an anonymous client address hits its quota while another address still creates tasks', async () => {
      const { url } = await serve({ tasks: { store: makeStore({ maxTasksPerAddress: 3 }) } }, { stateless: true })
      const call = (from: string) => legacyStateless(url, from, 'tools/call', { name: 'secret', arguments: { value: 'x' }, task: {} })
      for (let i = 0; i < 3; i++) expect(await call('127.0.0.2')).toHaveProperty('result.task.taskId')
      expect(await call('127.0.0.2')).toMatchObject({ error: { code: -32603, data: { limit: 3, scope: 'address' } } })
      for (let i = 0; i < 3; i++) expect(await call('127.0.0.3')).toHaveProperty('result.task.taskId')
    })

    it('modern-era anonymous clients no longer share one quota', async () => {
      const { url } = await serve({ tasks: { store: makeStore({ maxTasksPerOwner: 2 }) } }, {})
      const call = (from: string) => modern(url, from, 'tools/call', { name: 'secret', arguments: { value: 'x' } })
      // Two tasks each from two clients: with one shared anonymous owner the third was refused.
      for (const from of ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3']) expect(await call(from)).toMatchObject({ result: { resultType: 'task' } })
    })
  })

  it('sessions from one address share its quota: many sessions cannot fill the store', async () => {
    const { url } = await serve({ tasks: { store: createMemoryTaskStore({ maxTasksPerAddress: 4 }) } }, {})
    let accepted = 0
    let refused: JsonObject | undefined
    for (let s = 0; s < 3 && refused === undefined; s++) {
      const session = await legacySession(url, '127.0.0.2')
      for (let i = 0; i < 2; i++) {
        const answer = await session.call('tools/call', { name: 'secret', arguments: { value: 'x' }, task: {} })
        if (answer.error === undefined) accepted++
        else { refused = answer.error as JsonObject; break }
      }
    }
    expect(accepted).toBe(4)
    expect(refused).toMatchObject({ code: -32603, data: { limit: 4, scope: 'address' } })
    const other = await legacySession(url, '127.0.0.3')
    expect(await other.call('tools/call', { name: 'secret', arguments: { value: 'x' }, task: {} })).toHaveProperty('result.task.taskId')
  })

  it('bounds running handlers per address and per owner, and frees a slot when a task ends', async () => {
    const { url, running } = await serve({ tasks: { maxRunningTasksPerAddress: 2, maxRunningTasksPerOwner: 1 } }, {})
    const call = (from: string, name = 'forever') => modern(url, from, 'tools/call', { name, arguments: { value: 'x' } })
    const first = await call('127.0.0.2')
    await call('127.0.0.2')
    expect(await call('127.0.0.2')).toMatchObject({ error: { code: -32603, data: { limit: 2, scope: 'running-address' } } })
    expect(await call('127.0.0.3')).toMatchObject({ result: { resultType: 'task' } })
    expect(running).toHaveLength(3)
    // Cancelling one of A's tasks frees its slot (before the cancel is answered).
    const taskId = (first.result as JsonObject).taskId as string
    expect(await modern(url, '127.0.0.2', 'tasks/cancel', { taskId })).toHaveProperty('result')
    expect((await call('127.0.0.2')).result).toMatchObject({ resultType: 'task' })
    // One legacy session (one owner) is bounded whatever its address.
    const session = await legacySession(url, '127.0.0.4')
    const outcomes: JsonObject[] = []
    for (let i = 0; i < 3; i++) outcomes.push(await session.call('tools/call', { name: 'forever', arguments: {}, task: {} }))
    expect(outcomes.map(outcome => outcome.error === undefined)).toEqual([true, false, false])
    expect(outcomes[1]).toMatchObject({ error: { code: -32603, data: { limit: 1, scope: 'running-owner' } } })
  })
})
