import { afterEach, describe, expect, it } from 'vitest'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { VirtualTimeScheduler, filter, lastValueFrom, take, toArray } from 'rxjs'
import { createServer, type McpServer, type ServerOptions } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { McpError } from '../../lib/jsonrpc/errors.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { rawClient } from '../helpers/raw-client.ts'
import type { ServerTasks } from '../../actors/server/tasks.ts'
import { createMemoryTaskStore } from '../../actors/tasks/store.ts'
import { isTerminalStatus } from '../../actors/tasks/task.ts'
import { arrivals } from '../helpers/arrivals.ts'
import { taskChanges } from '../helpers/task-changes.ts'
import { sessionsEnded } from '../helpers/sessions-ended.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })
const TASKS = 'io.modelcontextprotocol/tasks'

let cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  cleanups = []
})

/** A server whose `slow` tool waits for the test, and whose `asks` tool waits for an answer that may never come. */
function makeServer(options: ServerOptions = {}) {
  const server = createServer({ name: 'faults', version: '1' }, options)
  cleanups.push(() => server.close())
  // The gates of the `slow` calls running now, as they start.
  const gates = arrivals<() => void>()
  const aborted: string[] = []
  server.tool('slow', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    ctx.signal.addEventListener('abort', () => aborted.push(ctx.task!.taskId))
    await new Promise<void>(resolve => gates.push(resolve))
    return text('slow done')
  })
  server.tool('quick', { execution: { taskSupport: 'optional' } }, () => text('quick'))
  server.tool('asks', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    ctx.signal.addEventListener('abort', () => aborted.push(ctx.task!.taskId))
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return text(`hello ${String(answer.content?.name)}`)
  })
  const changes = taskChanges(server)
  return { server, gates, aborted, tasks: (server as unknown as { tasks: ServerTasks }).tasks, reached: changes.reached, stopRecording: changes.stop }
}

const raw = (server: McpServer) => rawClient(server, close => cleanups.push(close))

describe('tasks survive their connection', () => {
  it('a client that drops mid-task and comes back (new session, same owner) gets the result; another owner does not see it', async () => {
    // The owner is the application's: here, the name the client gives (an API key's id, in real life).
    const { server, gates } = makeServer({ tasks: { owner: ctx => ctx.clientInfo?.name ?? '' } })
    const http = streamableHttp({ port: 0 })
    await server.listen(http)
    const open = async (name: string) => {
      const client = await connect(streamableHttpClient(http.url!), { name, version: '1' }, { era: 'legacy' })
      cleanups.push(() => client.close())
      return client
    }
    const first = await open('alice')
    const [created] = await lastValueFrom(first.callToolAsTask('slow').pipe(take(1), toArray()))
    const taskId = created!.type === 'task' ? created!.task.taskId : ''
    const ended = sessionsEnded(server)
    await first.close()
    await ended
    expect(server.sessions.size).toBe(0)

    const again = await open('alice')
    const result = again.tasks.result(taskId)
    ;(await gates.atLeast(1))[0]!()
    expect(await result).toMatchObject(text('slow done'))

    const mallory = await open('mallory')
    for (const attempt of [() => mallory.tasks.get(taskId), () => mallory.tasks.result(taskId), () => mallory.tasks.cancel(taskId)]) {
      await expect(attempt()).rejects.toMatchObject({ code: -32602 })
    }
    expect((await mallory.tasks.list()).tasks).toEqual([])
  })

  it('without an owner option, a new legacy session does not see the old session\'s task', async () => {
    const { server, gates } = makeServer()
    const http = streamableHttp({ port: 0 })
    await server.listen(http)
    const first = await connect(streamableHttpClient(http.url!), { name: 'one', version: '1' }, { era: 'legacy' })
    const [created] = await lastValueFrom(first.callToolAsTask('slow').pipe(take(1), toArray()))
    await first.close()
    const second: McpClient = await connect(streamableHttpClient(http.url!), { name: 'one', version: '1' }, { era: 'legacy' })
    cleanups.push(() => second.close())
    await expect(second.tasks.get(created!.type === 'task' ? created!.task.taskId : '')).rejects.toBeInstanceOf(McpError)
    gates.items.splice(0).forEach(open => open())
  })
})

describe('task expiry (virtual time)', () => {
  it('a task past its TTL is gone: tasks/get -32602, not listed, and nothing of it is held', async () => {
    const scheduler = new VirtualTimeScheduler()
    const { server, tasks, reached } = makeServer({ tasks: { scheduler, defaultTtlMs: 60_000 } })
    const { call } = await raw(server)
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
    const { task } = await call('tools/call', { name: 'quick', arguments: {}, task: {} }) as { task: { taskId: string; ttl: number } }
    expect(task.ttl).toBe(60_000)
    await reached(task.taskId, 'completed')
    expect(await call('tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'completed' })
    expect((await call('tasks/list') as { tasks: unknown[] }).tasks).toHaveLength(1)
    scheduler.flush()
    expect(scheduler.now()).toBe(60_000)
    await expect(call('tasks/get', { taskId: task.taskId })).rejects.toMatchObject({ code: -32602 })
    expect((await call('tasks/list') as { tasks: unknown[] }).tasks).toEqual([])
    expect(tasks.liveCount).toBe(0)
  })

  it('10,000 completed tasks expire and the heap comes back', async () => {
    const scheduler = new VirtualTimeScheduler()
    // One session makes them all: the store takes 10,000 for one owner and address (the defaults are 1,000).
    const store = createMemoryTaskStore({ scheduler, defaultTtlMs: 60_000, maxTasksPerOwner: 10_000, maxTasksPerAddress: 10_000 })
    const { server, tasks, stopRecording } = makeServer({ tasks: { scheduler, store } })
    // The heap is measured: nothing of the tasks may be kept by the test.
    stopRecording()
    const { call } = await raw(server)
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
    const count = 10_000
    // Every end, once stored and published (a task's slot is free by then).
    const ended = lastValueFrom(server.events.pipe(filter(event => event.type === 'task' && isTerminalStatus(event.task.status)), take(count)))
    gc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < count; i++) await call('tools/call', { name: 'quick', arguments: {}, task: {} })
    await ended
    expect(tasks.liveCount).toBe(0)
    gc()
    const loaded = process.memoryUsage().heapUsed
    scheduler.flush()
    gc()
    const after = process.memoryUsage().heapUsed
    const perTask = (loaded - before) / count
    console.log(`10,000 completed tasks: heap ${(before / 2 ** 20).toFixed(1)} MiB -> ${(loaded / 2 ** 20).toFixed(1)} MiB held (${perTask.toFixed(0)} bytes per stored task) -> ${(after / 2 ** 20).toFixed(1)} MiB after expiry`)
    expect((await call('tasks/list') as { tasks: unknown[] }).tasks).toEqual([])
    // What the tasks held is given back: the heap ends within a tenth of what they took.
    expect(loaded - before).toBeGreaterThan(0)
    expect(after - before).toBeLessThan((loaded - before) / 10 + 2 ** 20)
  }, 60_000)
})

describe('cancel during input_required', () => {
  it('legacy: the elicitation is outstanding; cancel ends the task cancelled and aborts the handler', async () => {
    const { server, aborted, reached } = makeServer()
    const { connection, call } = await raw(server)
    connection.setRequestHandler('elicitation/create', () => new Promise(() => {}))
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'raw', version: '1' } })
    connection.notify('notifications/initialized')
    const { task } = await call('tools/call', { name: 'asks', arguments: {}, task: {} }) as { task: { taskId: string } }
    await reached(task.taskId, 'input_required')
    expect(await call('tasks/cancel', { taskId: task.taskId })).toMatchObject({ status: 'cancelled' })
    expect(aborted).toEqual([task.taskId])
    expect(await call('tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'cancelled' })
  })

  it('modern: the task shows its input request; cancel ends it, and a late answer does not bring it back', async () => {
    const { server, aborted, reached } = makeServer()
    const { call } = await raw(server)
    const meta = { [MetaKey.protocolVersion]: '2026-07-28', [MetaKey.clientCapabilities]: { extensions: { [TASKS]: {} }, elicitation: { form: {} } }, [MetaKey.clientInfo]: { name: 'raw', version: '1' } }
    const { taskId } = await call('tools/call', { name: 'asks', arguments: {}, _meta: meta }) as { taskId: string }
    await reached(taskId, 'input_required')
    const waiting = await call('tasks/get', { taskId, _meta: meta })
    const [key] = Object.keys(waiting.inputRequests as JsonObject)
    await call('tasks/cancel', { taskId, _meta: meta })
    expect(aborted).toEqual([taskId])
    expect(await call('tasks/update', { taskId, inputResponses: { [key!]: { action: 'accept', content: { name: 'late' } } }, _meta: meta })).toMatchObject({ resultType: 'complete' })
    const after = await call('tasks/get', { taskId, _meta: meta })
    expect(after.status).toBe('cancelled')
    expect(after).not.toHaveProperty('result')
  })
})
