import { describe, expect, it } from 'vitest'
import { VirtualTimeScheduler, filter, firstValueFrom } from 'rxjs'
import { createServer, type ServerOptions } from '../../actors/server.ts'
import type { ActorInspectionEvent } from '../../actors/actor.ts'
import type { ServerContext } from '../../actors/server/api.ts'
import type { ServerTasks } from '../../actors/server/tasks.ts'
import { createMemoryTaskStore } from '../../actors/tasks/store.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { rawClient } from '../helpers/raw-client.ts'
import { countListeners } from '../helpers/count-listeners.ts'
import { cleanupsAfterEach } from '../helpers/cleanups.ts'

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

const { cleanups, unhandled } = cleanupsAfterEach()

/**
 * A server named `srv` whose `slow` tool runs until the test opens its gate (recording its aborted
 * tasks), with a legacy raw client; every task belongs to `me`, so a test may read it from outside.
 */
async function makeServer(options: ServerOptions = {}) {
  const server = createServer({ name: 'srv', version: '1' }, { reportUnhandledError: error => unhandled.push(error), ...options, tasks: { owner: () => 'me', ...options.tasks } })
  cleanups.push(() => server.close())
  // Counted from the start: tasks/result listens to the bus while it waits.
  const listeners = countListeners(server)
  let open!: () => void
  const opened = new Promise<void>(resolve => { open = resolve })
  const aborted: string[] = []
  server.tool('slow', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    ctx.signal.addEventListener('abort', () => aborted.push(ctx.task!.taskId))
    await opened
    return text('slow done')
  })
  const client = await rawClient(server, close => cleanups.push(close))
  await client.call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
  client.connection.notify('notifications/initialized')
  const start = async () => ((await client.call('tools/call', { name: 'slow', arguments: {}, task: {} })) as { task: { taskId: string } }).task.taskId
  const tasks = (server as unknown as { tasks: ServerTasks }).tasks
  /** Resolves once `n` streams listen to the bus (event-driven: the count is a BehaviorSubject). */
  const listening = (n: number) => firstValueFrom(listeners.pipe(filter(count => count === n)))
  return { server, ...client, start, open, aborted, tasks, listeners, listening }
}

/** A request context of the owner `me`, as tasks/result gets it, with a signal whose listeners are counted. */
function contextOf() {
  const controller = new AbortController()
  const signal = controller.signal
  const listeners = new Set<unknown>()
  const add = signal.addEventListener.bind(signal)
  const remove = signal.removeEventListener.bind(signal)
  signal.addEventListener = ((type: string, listener: EventListener, options?: AddEventListenerOptions) => { listeners.add(listener); add(type, listener, options) }) as typeof signal.addEventListener
  signal.removeEventListener = ((type: string, listener: EventListener) => { listeners.delete(listener); remove(type, listener) }) as typeof signal.removeEventListener
  const ctx = { era: 'legacy', method: 'tasks/result', signal, clientCapabilities: {}, meta: undefined } as unknown as ServerContext
  return { ctx, controller, listeners }
}

/** Poll actions of the scheduler at or after `from` (absolute frames). */
const pendingAt = (scheduler: VirtualTimeScheduler, frame: number) => scheduler.actions.filter(action => (action as unknown as { delay: number }).delay === frame)

describe('the task actor tree', () => {
  it('shows in server.system.inspect: each task under the tasks actor, its work under the task', async () => {
    const scheduler = new VirtualTimeScheduler()
    const inspected: ActorInspectionEvent[] = []
    const { server, start, call } = await makeServer({ scheduler })
    server.system.inspect.subscribe(event => inspected.push(event))
    const first = await start()
    const second = await start()
    const tree = (events: ActorInspectionEvent[]) => events.flatMap(event =>
      (event.type === 'rxmcp.actor.spawned' && ['tasks', 'task', 'work'].includes(event.logic)) ? [`${event.actor} <- ${event.parent ?? '(root)'}`]
        : event.type === 'rxmcp.actor.ended' && event.actor.startsWith('srv/tasks') ? [`${event.actor} ${event.status}`] : [])
    expect(tree(inspected)).toEqual([
      'srv/tasks <- (root)',
      `srv/tasks/${first} <- srv/tasks`,
      `srv/tasks/${first}/work <- srv/tasks/${first}`,
      `srv/tasks/${second} <- srv/tasks`,
      `srv/tasks/${second}/work <- srv/tasks/${second}`,
    ])
    inspected.length = 0
    // Cancelling stops the work child, then the task is done with its final state.
    await call('tasks/cancel', { taskId: first })
    expect(tree(inspected)).toEqual([`srv/tasks/${first}/work stopped`, `srv/tasks/${first} done`])
    expect(server.system.get('tasks')?.path).toBe('srv/tasks')
  })
})

describe('task TTL (virtual time, ServerOptions.scheduler)', () => {
  it('a running task past its TTL is stopped: its handler aborted, its slot freed, the store forgets it', async () => {
    const scheduler = new VirtualTimeScheduler()
    const { start, call, failure, aborted, tasks, server } = await makeServer({ scheduler, tasks: { defaultTtlMs: 60_000 } })
    const ended: ActorInspectionEvent[] = []
    // The task's actors only: the requests (tools/call, tasks/get) are actors that end too.
    server.system.inspect.pipe(filter(event => event.type === 'rxmcp.actor.ended' && event.actor.startsWith('srv/tasks/'))).subscribe(event => ended.push(event))
    const taskId = await start()
    expect(tasks.liveCount).toBe(1)
    scheduler.maxFrames = 59_999
    scheduler.flush()
    expect(aborted).toEqual([])
    expect(await call('tasks/get', { taskId })).toMatchObject({ status: 'working', ttl: 60_000 })
    scheduler.maxFrames = 60_000
    scheduler.flush()
    expect(aborted).toEqual([taskId])
    expect(tasks.liveCount).toBe(0)
    expect(ended).toEqual([
      { type: 'rxmcp.actor.ended', actor: `srv/tasks/${taskId}/work`, status: 'stopped' },
      { type: 'rxmcp.actor.ended', actor: `srv/tasks/${taskId}`, status: 'stopped' },
    ])
    expect((await failure('tasks/get', { taskId })).code).toBe(-32602)
  })
})

describe('task TTL (virtual time, tasks.scheduler only)', () => {
  it('runs on the tasks\' scheduler: the task actors live in a system of their own on it, not in server.system', async () => {
    const scheduler = new VirtualTimeScheduler()
    const { start, aborted, tasks, server } = await makeServer({ tasks: { scheduler, defaultTtlMs: 1000 } })
    const spawned: string[] = []
    server.system.inspect.subscribe(event => { if (event.type === 'rxmcp.actor.spawned') spawned.push(event.actor) })
    const taskId = await start()
    expect(aborted).toEqual([])
    scheduler.flush()
    expect(scheduler.now()).toBe(1000)
    expect(aborted).toEqual([taskId])
    expect(tasks.liveCount).toBe(0)
    expect(spawned.filter(path => path.startsWith('srv/tasks'))).toEqual([])
  })
})

describe('tasks/result as a stream (virtual time)', () => {
  it('resolves when the result arrives later, and leaves no listener on the bus, the signal or the scheduler', async () => {
    const scheduler = new VirtualTimeScheduler()
    const { start, open, tasks, listeners, listening } = await makeServer({ scheduler })
    const idle = listeners.value
    const taskId = await start()
    const { ctx, listeners: onSignal } = contextOf()
    const result = tasks.result({ taskId }, ctx)
    await listening(idle + 1)
    expect(onSignal.size).toBe(1)
    expect(pendingAt(scheduler, 1000)).toHaveLength(1)
    open()
    expect(await result).toEqual({ ...text('slow done'), _meta: { 'io.modelcontextprotocol/related-task': { taskId } } })
    expect(listeners.value).toBe(idle)
    expect(onSignal.size).toBe(0)
    expect(pendingAt(scheduler, 1000)).toHaveLength(0)
  })

  it('reads the store every poll interval: a task the store ended behind the server\'s back (no event) ends the wait', async () => {
    const scheduler = new VirtualTimeScheduler()
    const store = createMemoryTaskStore({ scheduler })
    const { start, call, listeners, listening } = await makeServer({ scheduler, tasks: { store, pollIntervalMs: 2500 } })
    const idle = listeners.value
    const taskId = await start()
    const waiting = call('tasks/result', { taskId }).then(value => ({ value }), (error: unknown) => ({ error }))
    await listening(idle + 1)
    // What a store does for a task whose instance is gone: failed, with no event on this server's bus.
    const stored = (await store.get<JsonObject>(taskId, 'me'))!
    await store.update({ ...stored, status: 'failed', error: { code: -32603, message: 'Internal error: the instance running the task is gone' } })
    scheduler.maxFrames = 2499
    scheduler.flush()
    expect(listeners.value).toBe(idle + 1)
    scheduler.maxFrames = 2500
    scheduler.flush()
    expect(await waiting).toMatchObject({ error: { code: -32603, message: 'Internal error: the instance running the task is gone' } })
    expect(listeners.value).toBe(idle)
    expect(pendingAt(scheduler, 5000)).toHaveLength(0)
  })

  it('ends on the request\'s abort with its reason, leaving no listener on the bus, the signal or the scheduler', async () => {
    const scheduler = new VirtualTimeScheduler()
    const { start, tasks, listeners, listening } = await makeServer({ scheduler })
    const idle = listeners.value
    const taskId = await start()
    const { ctx, controller, listeners: onSignal } = contextOf()
    const result = tasks.result({ taskId }, ctx)
    await listening(idle + 1)
    const reason = new Error('cancelled by the client')
    controller.abort(reason)
    await expect(result).rejects.toBe(reason)
    expect(listeners.value).toBe(idle)
    expect(onSignal.size).toBe(0)
    expect(pendingAt(scheduler, 1000)).toHaveLength(0)
  })

  it('ends when the client cancels the request on the wire (notifications/cancelled), leaving no bus listener', async () => {
    const { start, connection, listeners, listening } = await makeServer({ scheduler: new VirtualTimeScheduler() })
    const idle = listeners.value
    const taskId = await start()
    const subscription = connection.request('tasks/result', { taskId }, { progress: false, timeout: 0 }).subscribe()
    await listening(idle + 1)
    subscription.unsubscribe()
    await listening(idle)
  })

  it('answers at once for a task already terminal, listening to nothing', async () => {
    const { start, open, call, listeners, server } = await makeServer()
    const taskId = await start()
    const idle = listeners.value
    const ended = firstValueFrom(server.events.pipe(filter(event => event.type === 'task' && event.task.taskId === taskId && event.task.status === 'completed')))
    open()
    await ended
    expect(await call('tasks/result', { taskId })).toMatchObject(text('slow done'))
    expect(listeners.value).toBe(idle)
  })
})
