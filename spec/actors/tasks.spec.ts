import { describe, expect, it } from 'vitest'
import { NEVER, Subject, VirtualTimeScheduler, map, of, throwError } from 'rxjs'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import type { TaskStatus } from '../../lib/schema/types.ts'
import {
  TASK_DEFAULTS, TaskExpiredError, TaskTransitionError, canTransition, createTask, stepTask, taskToWire,
  type TaskMessage, type TaskState,
} from '../../actors/tasks/task.ts'
import { TaskStoreFullError, createMemoryTaskStore, randomTaskId } from '../../actors/tasks/store.ts'
import { createTestScheduler } from '../helpers/marbles.ts'

const ALL: TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled']

function stateIn(status: TaskStatus): TaskState<string> {
  return { taskId: 't1', owner: 'alice', status, createdAt: 0, lastUpdatedAt: 0, ttlMs: 1000, pollIntervalMs: 100 }
}

const MESSAGES: Record<string, TaskMessage<string>> = {
  'status': { type: 'status', statusMessage: 'halfway' },
  'input-required': { type: 'input-required', statusMessage: 'need a city' },
  'resume': { type: 'resume' },
  'complete': { type: 'complete', result: 'done' },
  'fail': { type: 'fail', error: new Error('boom') },
  'fail-with-result': { type: 'fail-with-result', result: 'isError result' },
  'cancel': { type: 'cancel', statusMessage: 'by request' },
}

// Every (status, message) pair: the status it leads to, or 'refused'.
const TABLE: [TaskStatus, string, TaskStatus | 'refused'][] = [
  ['working', 'status', 'working'],
  ['working', 'input-required', 'input_required'],
  ['working', 'resume', 'refused'],
  ['working', 'complete', 'completed'],
  ['working', 'fail', 'failed'],
  ['working', 'fail-with-result', 'failed'],
  ['working', 'cancel', 'cancelled'],
  ['input_required', 'status', 'input_required'],
  ['input_required', 'input-required', 'refused'],
  ['input_required', 'resume', 'working'],
  ['input_required', 'complete', 'completed'],
  ['input_required', 'fail', 'failed'],
  ['input_required', 'fail-with-result', 'failed'],
  ['input_required', 'cancel', 'cancelled'],
  ...(['completed', 'failed', 'cancelled'] as const).flatMap(status =>
    Object.keys(MESSAGES).map(type => [status, type, 'refused'] as [TaskStatus, string, 'refused'])),
]

describe('stepTask', () => {
  it.each(TABLE)('from %s, %s leads to %s', (from, type, to) => {
    const before = stateIn(from)
    const next = stepTask(before, MESSAGES[type]!, 50)
    if (to === 'refused') {
      expect(next).toBeInstanceOf(TaskTransitionError)
      expect((next as TaskTransitionError).code).toBe('RXMCP_ERR_TASK_TRANSITION')
      expect((next as TaskTransitionError).message).toBe(`Task t1: '${type}' is not allowed in status '${from}'`)
    } else {
      expect(next).not.toBeInstanceOf(TaskTransitionError)
      expect((next as TaskState).status).toBe(to)
      expect((next as TaskState).lastUpdatedAt).toBe(50)
    }
    expect(before.status).toBe(from)
  })

  it('refuses run in a terminal state and keeps the state in others', () => {
    const work = of('x')
    expect(stepTask(stateIn('completed'), { type: 'run', work }, 1)).toBeInstanceOf(TaskTransitionError)
    const working = stateIn('working')
    expect(stepTask(working, { type: 'run', work }, 1)).toBe(working)
  })

  it('keeps the result of complete and the error of fail, with the error as status message', () => {
    expect(stepTask(stateIn('working'), MESSAGES.complete!, 1)).toMatchObject({ status: 'completed', result: 'done' })
    const failed = stepTask(stateIn('working'), MESSAGES.fail!, 1) as TaskState
    expect(failed).toMatchObject({ status: 'failed', statusMessage: 'boom' })
    expect(failed.error).toBeInstanceOf(Error)
  })

  it('drops the old status message on a status change without one', () => {
    const waiting = { ...stateIn('input_required'), statusMessage: 'need a city' }
    expect(stepTask(waiting, { type: 'resume' }, 1)).not.toHaveProperty('statusMessage')
  })
})

describe('canTransition', () => {
  it.each(ALL.flatMap(from => ALL.map(to => [from, to] as const)))('%s -> %s', (from, to) => {
    const legal = new Set([
      'working->working', 'working->input_required', 'working->completed', 'working->failed', 'working->cancelled',
      'input_required->input_required', 'input_required->working', 'input_required->completed', 'input_required->failed', 'input_required->cancelled',
    ])
    expect(canTransition(from, to)).toBe(legal.has(`${from}->${to}`))
  })
})

describe('taskToWire', () => {
  it('uses the wire names and ISO 8601 times', () => {
    const wire = taskToWire({ ...stateIn('working'), owner: 'secret', statusMessage: 'hi', createdAt: Date.UTC(2025, 10, 25, 10, 30), lastUpdatedAt: Date.UTC(2025, 10, 25, 10, 40), result: 'r' })
    expect(wire).toEqual({
      taskId: 't1', status: 'working', statusMessage: 'hi', createdAt: '2025-11-25T10:30:00.000Z',
      lastUpdatedAt: '2025-11-25T10:40:00.000Z', ttl: 1000, pollInterval: 100,
    })
  })

  it('gives ttl null for unlimited retention', () => {
    expect(taskToWire({ ...stateIn('working'), ttlMs: null }).ttl).toBeNull()
  })
})

function newTask(options: Partial<Parameters<typeof createTask<string>>[0]> = {}) {
  const scheduler = new VirtualTimeScheduler()
  const errors: unknown[] = []
  const task = createTask<string>({ taskId: 't1', owner: 'alice', ttlMs: 1000, pollIntervalMs: 100, scheduler, reportError: error => errors.push(error), ...options })
  return { task, scheduler, errors }
}

describe('createTask', () => {
  it('starts in working with its defaults', () => {
    const task = createTask({ taskId: 'x', owner: 'o', scheduler: new VirtualTimeScheduler() })
    expect(task.state).toMatchObject({ status: 'working', ttlMs: TASK_DEFAULTS.ttlMs, pollIntervalMs: TASK_DEFAULTS.pollIntervalMs, createdAt: 0 })
  })

  it('emits every state change on states', () => {
    const { task } = newTask()
    const seen: string[] = []
    task.states.subscribe(state => seen.push(`${state.status}:${state.statusMessage ?? ''}`))
    task.send({ type: 'status', statusMessage: 'a' })
    task.send({ type: 'input-required', statusMessage: 'b' })
    task.send({ type: 'resume' })
    task.send({ type: 'complete', result: 'r' })
    expect(seen).toEqual(['working:', 'working:a', 'input_required:b', 'working:', 'completed:'])
  })

  it('refuses and reports a message that would leave a terminal state, keeping the result', () => {
    const { task, errors } = newTask()
    const seen: TaskState<string>[] = []
    task.states.subscribe(state => seen.push(state))
    task.send({ type: 'complete', result: 'r' })
    task.send({ type: 'cancel' })
    task.send({ type: 'fail', error: new Error('late') })
    expect(task.state).toMatchObject({ status: 'completed', result: 'r' })
    expect(task.state.error).toBeUndefined()
    expect(seen).toHaveLength(2)
    expect(errors).toHaveLength(2)
    expect(errors[0]).toBeInstanceOf(TaskTransitionError)
    expect((errors[0] as TaskTransitionError).message).toBe("Task t1: 'cancel' is not allowed in status 'completed'")
  })

  it('completes with the last value of its work', () => {
    const work = new Subject<string>()
    const { task } = newTask({ work })
    work.next('first')
    work.next('second')
    expect(task.state.status).toBe('working')
    work.complete()
    expect(task.state).toMatchObject({ status: 'completed', result: 'second' })
  })

  it('fails with the error of its work', () => {
    const { task } = newTask({ work: throwError(() => new Error('rate limited')) })
    expect(task.state).toMatchObject({ status: 'failed', statusMessage: 'rate limited' })
    expect((task.state.error as Error).message).toBe('rate limited')
  })

  it('fails when the work completes without a result', () => {
    const { task } = newTask({ work: of<string>() })
    expect(task.state.status).toBe('failed')
    expect((task.state.error as Error).message).toBe("The task's work completed without a result")
  })

  it('ends failed keeping a result that is itself a failure', () => {
    const { task } = newTask({ work: of('isError'), isFailedResult: result => result === 'isError' })
    expect(task.state).toMatchObject({ status: 'failed', result: 'isError' })
  })

  it('unsubscribes the work on cancel, in working and in input_required', () => {
    for (const before of ['working', 'input_required'] as const) {
      const work = new Subject<string>()
      const { task, errors } = newTask({ work })
      if (before === 'input_required') task.send({ type: 'input-required' })
      expect(work.observed).toBe(true)
      task.send({ type: 'cancel', statusMessage: 'stop' })
      expect(work.observed).toBe(false)
      work.next('late')
      work.complete()
      expect(task.state).toMatchObject({ status: 'cancelled', statusMessage: 'stop' })
      expect(task.state.result).toBeUndefined()
      expect(errors).toEqual([])
    }
  })

  it('unsubscribes the work when a result is sent from outside', () => {
    const work = new Subject<string>()
    const { task } = newTask({ work })
    task.send({ type: 'complete', result: 'outside' })
    expect(work.observed).toBe(false)
  })

  it('refuses a second run', () => {
    const { task, errors } = newTask({ work: NEVER })
    task.send({ type: 'run', work: of('again') })
    expect(task.state.status).toBe('working')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(TaskTransitionError)
  })

  it('expires ttl after creation, unsubscribing the work and completing states', () => {
    const work = new Subject<string>()
    const expired: string[] = []
    const { task, scheduler } = newTask({ work, onExpire: state => expired.push(state.status) })
    let isComplete = false
    task.states.subscribe({ complete: () => { isComplete = true } })
    scheduler.maxFrames = 999
    scheduler.flush()
    expect(task.isExpired).toBe(false)
    scheduler.maxFrames = 1000
    scheduler.flush()
    expect(task.isExpired).toBe(true)
    expect(isComplete).toBe(true)
    expect(work.observed).toBe(false)
    expect(expired).toEqual(['working'])
  })

  it('keeps a terminal result until the ttl from creation, then expires', () => {
    createTestScheduler().run(({ expectObservable, cold }) => {
      const task = createTask<string>({ taskId: 't', owner: 'o', ttlMs: 10, work: cold('--a|') })
      expectObservable(task.states.pipe(map(state => state.status))).toBe('w--c------|', { w: 'working', c: 'completed' })
    })
  })

  it('never expires with ttl null', () => {
    const { task, scheduler } = newTask({ ttlMs: null })
    scheduler.maxFrames = Number.POSITIVE_INFINITY
    scheduler.flush()
    expect(task.isExpired).toBe(false)
  })

  it('emits the terminal state on settled and completes', () => {
    const work = new Subject<string>()
    const { task } = newTask({ work })
    const settled: string[] = []
    let isComplete = false
    task.settled.subscribe({ next: state => settled.push(state.status), complete: () => { isComplete = true } })
    task.send({ type: 'input-required' })
    expect(settled).toEqual([])
    task.send({ type: 'resume' })
    work.next('r')
    work.complete()
    expect(settled).toEqual(['completed'])
    expect(isComplete).toBe(true)
  })

  it('errors settled with TaskExpiredError when the task expires first', () => {
    const { task, scheduler } = newTask({ work: NEVER })
    let error: unknown
    task.settled.subscribe({ error: e => { error = e } })
    scheduler.flush()
    expect(error).toBeInstanceOf(TaskExpiredError)
    expect((error as TaskExpiredError).code).toBe('RXMCP_ERR_TASK_EXPIRED')
    let late: unknown
    task.settled.subscribe({ error: e => { late = e } })
    expect(late).toBeInstanceOf(TaskExpiredError)
  })

  it('exposes the wire form', () => {
    const { task } = newTask({ statusMessage: 'queued' })
    expect(task.toWire()).toEqual({
      taskId: 't1', status: 'working', statusMessage: 'queued', createdAt: '1970-01-01T00:00:00.000Z',
      lastUpdatedAt: '1970-01-01T00:00:00.000Z', ttl: 1000, pollInterval: 100,
    })
  })
})

function newStore(options: Parameters<typeof createMemoryTaskStore>[0] = {}) {
  const scheduler = new VirtualTimeScheduler()
  let n = 0
  const store = createMemoryTaskStore({ scheduler, idGenerator: () => `id${++n}`, ...options })
  return { store, scheduler }
}

describe('createMemoryTaskStore', () => {
  it('creates a task in working, readable by its owner only', async () => {
    const { store } = newStore()
    const task = await store.create({ owner: 'alice', ttlMs: 5000 })
    expect(task).toMatchObject({ taskId: 'id1', owner: 'alice', status: 'working', ttlMs: 5000, createdAt: 0 })
    expect(await store.get(task.taskId, 'alice')).toEqual(task)
    expect(await store.get(task.taskId, 'mallory')).toBeUndefined()
    expect(await store.delete(task.taskId, 'mallory')).toBe(false)
    await expect(store.update({ ...task, owner: 'mallory', status: 'cancelled' })).rejects.toThrow(InvalidParamsError)
    expect((await store.list('mallory')).tasks).toEqual([])
    expect((await store.get(task.taskId, 'alice'))?.status).toBe('working')
  })

  it('makes unguessable base64url ids by default', async () => {
    const store = createMemoryTaskStore({ scheduler: new VirtualTimeScheduler() })
    const a = await store.create({ owner: 'o' })
    const b = await store.create({ owner: 'o' })
    expect(a.taskId).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(a.taskId).not.toBe(b.taskId)
    expect(randomTaskId()).toMatch(/^[A-Za-z0-9_-]{22}$/)
  })

  it('stores updates and keeps a terminal task final', async () => {
    const { store } = newStore()
    const task = await store.create({ owner: 'alice' })
    await store.update({ ...task, status: 'input_required', statusMessage: 'need input' })
    await store.update({ ...task, status: 'completed', result: { content: [] }, ttlMs: 1, createdAt: 99 })
    const done = await store.get(task.taskId, 'alice')
    expect(done).toMatchObject({ status: 'completed', result: { content: [] }, ttlMs: task.ttlMs, createdAt: 0 })
    const refused = store.update({ ...task, status: 'working' })
    await expect(refused).rejects.toThrow(TaskTransitionError)
    await expect(store.update({ ...task, status: 'completed', result: 'other' })).rejects.toThrow(TaskTransitionError)
    expect((await store.get(task.taskId, 'alice'))?.result).toEqual({ content: [] })
  })

  it('refuses an illegal path between non-terminal statuses', async () => {
    const { store } = newStore()
    const task = await store.create({ owner: 'alice' })
    await store.update({ ...task, status: 'input_required' })
    await store.update({ ...task, status: 'working' })
    expect((await store.get(task.taskId, 'alice'))?.status).toBe('working')
  })

  it('lists an owner\'s tasks a page at a time with opaque cursors', async () => {
    const { store } = newStore({ pageSize: 2 })
    for (let i = 0; i < 5; i++) await store.create({ owner: i % 2 === 0 ? 'alice' : 'bob' })
    await store.create({ owner: 'alice' })
    const first = await store.list('alice')
    expect(first.tasks.map(t => t.taskId)).toEqual(['id1', 'id3'])
    expect(first.nextCursor).toEqual(expect.any(String))
    await store.delete('id3', 'alice')
    const second = await store.list('alice', first.nextCursor)
    expect(second.tasks.map(t => t.taskId)).toEqual(['id5', 'id6'])
    expect(second.nextCursor).toBeUndefined()
    expect((await store.list('bob')).tasks.map(t => t.taskId)).toEqual(['id2', 'id4'])
    expect((await store.list('bob')).nextCursor).toBeUndefined()
  })

  it('rejects an unknown cursor with invalid params', async () => {
    const { store } = newStore()
    await expect(store.list('alice', 'not a cursor')).rejects.toThrow(InvalidParamsError)
    await expect(store.list('alice', 'not a cursor')).rejects.toMatchObject({ code: -32602, message: 'Invalid cursor' })
  })

  it('refuses creation past maxTasks, and again has room after a delete', async () => {
    const { store } = newStore({ maxTasks: 2 })
    await store.create({ owner: 'a' })
    await store.create({ owner: 'b' })
    const refused = store.create({ owner: 'c' })
    await expect(refused).rejects.toThrow(TaskStoreFullError)
    await expect(store.create({ owner: 'c' })).rejects.toMatchObject({ code: 'RXMCP_ERR_TASK_STORE_FULL', message: 'Task store is full (2 tasks)' })
    expect(await store.delete('id1', 'a')).toBe(true)
    await expect(store.create({ owner: 'c' })).resolves.toMatchObject({ owner: 'c' })
  })

  it('refuses creation past maxTasksPerOwner', async () => {
    const { store } = newStore({ maxTasksPerOwner: 1 })
    await store.create({ owner: 'a' })
    await expect(store.create({ owner: 'a' })).rejects.toMatchObject({ code: 'RXMCP_ERR_TASK_STORE_FULL', scope: 'owner' })
    await expect(store.create({ owner: 'b' })).resolves.toMatchObject({ owner: 'b' })
  })

  it('deletes a task ttl after its creation, whatever its status', async () => {
    const { store, scheduler } = newStore({ maxTasks: 1 })
    const task = await store.create({ owner: 'alice', ttlMs: 100 })
    await store.update({ ...task, status: 'completed', result: 'r' })
    scheduler.maxFrames = 99
    scheduler.flush()
    expect((await store.get(task.taskId, 'alice'))?.result).toBe('r')
    scheduler.maxFrames = 100
    scheduler.flush()
    expect(await store.get(task.taskId, 'alice')).toBeUndefined()
    expect((await store.list('alice')).tasks).toEqual([])
    await expect(store.update({ ...task, status: 'cancelled' })).rejects.toThrow(InvalidParamsError)
    await expect(store.create({ owner: 'bob' })).resolves.toMatchObject({ owner: 'bob' })
  })

  it('never returns a task past its ttl even before its timer runs', async () => {
    const clock = { now: 0 }
    const scheduler = new VirtualTimeScheduler()
    scheduler.now = () => clock.now
    const store = createMemoryTaskStore({ scheduler })
    const task = await store.create({ owner: 'alice', ttlMs: 100 })
    clock.now = 100
    expect(await store.get(task.taskId, 'alice')).toBeUndefined()
  })

  it('applies the default ttl and caps a requested one at maxTtlMs', async () => {
    const { store } = newStore({ defaultTtlMs: 500, maxTtlMs: 1000 })
    expect((await store.create({ owner: 'a' })).ttlMs).toBe(500)
    expect((await store.create({ owner: 'a', ttlMs: 50_000 })).ttlMs).toBe(1000)
    expect((await store.create({ owner: 'a', ttlMs: null })).ttlMs).toBe(500)
    const unlimited = newStore({ defaultTtlMs: null, maxTtlMs: null }).store
    expect((await unlimited.create({ owner: 'a' })).ttlMs).toBeNull()
  })

  it('hands out copies, so callers cannot change stored tasks', async () => {
    const { store } = newStore()
    const task = await store.create({ owner: 'alice' })
    task.status = 'completed'
    expect((await store.get(task.taskId, 'alice'))?.status).toBe('working')
  })

  it('drops everything and its timers on close', async () => {
    const { store, scheduler } = newStore()
    const task = await store.create({ owner: 'alice', ttlMs: 100 })
    await store.close()
    expect(await store.get(task.taskId, 'alice')).toBeUndefined()
    expect(scheduler.actions).toHaveLength(0)
  })
})
