import { describe, expect, it } from 'vitest'
import { NEVER, Subject, VirtualTimeScheduler, of, type Observable } from 'rxjs'
import { createActorSystem, type ActorInspectionEvent, type ActorLogic, type Effect, type Snapshot } from '../../actors/actor.ts'
import {
  TASK_WORK, TaskTransitionError, taskLogic, taskWork, tasksLogic,
  type TaskActorState, type TaskEvent, type TaskInput, type TaskLogicMessage, type TaskState, type TaskWorkMessage,
} from '../../actors/tasks/task.ts'
import { createTestScheduler } from '../helpers/marbles.ts'

const INPUT: TaskInput = { taskId: 't1', owner: 'alice', createdAt: 1000, ttlMs: 5000, pollIntervalMs: 100 }
const WORK = NEVER as Observable<TaskWorkMessage>

function task(status: TaskState['status'], extra: Partial<TaskState> = {}): TaskState {
  return { taskId: 't1', owner: 'alice', status, createdAt: 1000, lastUpdatedAt: 1000, ttlMs: 5000, pollIntervalMs: 100, ...extra }
}

function state(status: TaskState['status'], hasWork = true, extra: Partial<TaskState> = {}): TaskActorState {
  return { task: task(status, extra), hasWork }
}

/** The effects of a step, with a spawn shown as its id and logic name (its logic is a closure over the work). */
function shown(effects: readonly Effect[]): unknown[] {
  return effects.map(effect => effect.type === 'spawn' ? { type: 'spawn', id: effect.id, logic: effect.logic.name } : effect)
}

const changed = (next: TaskState): Effect => ({ type: 'emit', event: { type: 'changed', task: next } satisfies TaskEvent })
const refused = (from: TaskState['status'], type: string): Effect => ({ type: 'emit', event: { type: 'refused', error: new TaskTransitionError('t1', from, type) } })
const end = (next: TaskState): Effect[] => [{ type: 'stop', id: TASK_WORK }, changed(next), { type: 'done', output: next }]
const EXPIRE = { type: 'rxmcp.task.expire' }
const BOOM = new Error('boom')
const NO_RESULT = new Error('The task\'s work completed without a result')

describe('taskLogic', () => {
  it('starts in working, as created, with no work yet', () => {
    expect(taskLogic.initial({ ...INPUT, statusMessage: 'queued' })).toEqual({ task: task('working', { statusMessage: 'queued' }), hasWork: false })
  })

  // Every row: the state before, the message, the state after, the effects (as data, nothing run).
  it.each<[string, TaskActorState, TaskLogicMessage, TaskActorState, unknown[]]>([
    ['start sets the TTL timer from creation', state('working', false), { type: 'rxmcp.task.start', at: 1200 }, state('working', false),
      [{ type: 'timer', id: 'ttl', delay: 4800, message: EXPIRE }]],
    ['start past the TTL expires at once', state('working', false), { type: 'rxmcp.task.start', at: 9000 }, state('working', false),
      [{ type: 'timer', id: 'ttl', delay: 0, message: EXPIRE }]],
    ['start with ttl null sets no timer', { task: task('working', { ttlMs: null }), hasWork: false }, { type: 'rxmcp.task.start', at: 1000 }, { task: task('working', { ttlMs: null }), hasWork: false }, []],
    ['start with work spawns it as the child "work"', state('working', false), { type: 'rxmcp.task.start', at: 1000, work: WORK }, state('working', true),
      [{ type: 'timer', id: 'ttl', delay: 5000, message: EXPIRE }, { type: 'spawn', id: 'work', logic: 'work' }]],
    ['run without work spawns it', state('working', false), { type: 'run', at: 1100, work: WORK }, state('working', true), [{ type: 'spawn', id: 'work', logic: 'work' }]],
    ['run with a work already is refused', state('working'), { type: 'run', at: 1100, work: WORK }, state('working'), [refused('working', 'run')]],
    ['status keeps working and sets the message', state('working'), { type: 'status', statusMessage: 'half', at: 1500 }, state('working', true, { statusMessage: 'half', lastUpdatedAt: 1500 }),
      [changed(task('working', { statusMessage: 'half', lastUpdatedAt: 1500 }))]],
    ['input-required leads to input_required', state('working'), { type: 'input-required', at: 1500 }, state('input_required', true, { lastUpdatedAt: 1500 }),
      [changed(task('input_required', { lastUpdatedAt: 1500 }))]],
    ['input-required with input requests while input_required updates them', state('input_required'), { type: 'input-required', inputRequests: { a: { method: 'roots/list', params: {} } }, at: 1600 },
      state('input_required', true, { lastUpdatedAt: 1600, inputRequests: { a: { method: 'roots/list', params: {} } } }),
      [changed(task('input_required', { lastUpdatedAt: 1600, inputRequests: { a: { method: 'roots/list', params: {} } } }))]],
    ['input-required again without requests is refused', state('input_required'), { type: 'input-required', at: 1500 }, state('input_required'), [refused('input_required', 'input-required')]],
    ['resume leads back to working, dropping the input requests', state('input_required', true, { inputRequests: {} }), { type: 'resume', at: 1700 }, state('working', true, { lastUpdatedAt: 1700 }),
      [changed(task('working', { lastUpdatedAt: 1700 }))]],
    ['resume in working is refused', state('working'), { type: 'resume', at: 1700 }, state('working'), [refused('working', 'resume')]],
    ['complete stops the work, tells, and is done with the final task', state('working'), { type: 'complete', result: 'r', at: 2000 }, state('completed', true, { lastUpdatedAt: 2000, result: 'r' }),
      end(task('completed', { lastUpdatedAt: 2000, result: 'r' }))],
    ['fail keeps the error, its message as status message', state('input_required'), { type: 'fail', error: BOOM, at: 2000 }, state('failed', true, { lastUpdatedAt: 2000, error: BOOM, statusMessage: 'boom' }),
      end(task('failed', { lastUpdatedAt: 2000, error: BOOM, statusMessage: 'boom' }))],
    ['fail-with-result keeps the result', state('working'), { type: 'fail-with-result', result: 'isError', at: 2000 }, state('failed', true, { lastUpdatedAt: 2000, result: 'isError' }),
      end(task('failed', { lastUpdatedAt: 2000, result: 'isError' }))],
    ['cancel in input_required stops the work', state('input_required'), { type: 'cancel', statusMessage: 'stop', at: 2000 }, state('cancelled', true, { lastUpdatedAt: 2000, statusMessage: 'stop' }),
      end(task('cancelled', { lastUpdatedAt: 2000, statusMessage: 'stop' }))],
    ['the TTL\'s message tells of the expiry and stops the task', state('working'), { type: 'rxmcp.task.expire' }, state('working'),
      [{ type: 'emit', event: { type: 'expired', task: task('working') } }, { type: 'stop' }]],
    ['the work ending without a word fails the task', state('working', true, { lastUpdatedAt: 1500 }), { type: 'rxmcp.child.done', id: 'work', output: undefined },
      state('failed', true, { lastUpdatedAt: 1500, error: NO_RESULT, statusMessage: NO_RESULT.message }),
      end(task('failed', { lastUpdatedAt: 1500, error: NO_RESULT, statusMessage: NO_RESULT.message }))],
    ['the work failing fails the task', state('working'), { type: 'rxmcp.child.error', id: 'work', error: BOOM }, state('failed', true, { error: BOOM, statusMessage: 'boom' }),
      end(task('failed', { error: BOOM, statusMessage: 'boom' }))],
    ['another child\'s end is ignored', state('working'), { type: 'rxmcp.child.done', id: 'other', output: 1 }, state('working'), []],
    ['a restarting child is ignored', state('working'), { type: 'rxmcp.child.restarting', id: 'work', attempt: 1, delay: 10, error: BOOM }, state('working'), []],
  ])('%s', (_, before, message, after, effects) => {
    const [next, ran] = taskLogic.transition(before, message)
    expect(next).toEqual(after)
    expect(shown(ran)).toEqual(effects)
  })

  it('returns the very state it was given when it refuses (no snapshot is published)', () => {
    const before = state('working')
    expect(taskLogic.transition(before, { type: 'resume', at: 1 })[0]).toBe(before)
  })
})

describe('tasksLogic', () => {
  it.each<[string, Parameters<typeof tasksLogic.transition>[1], unknown[]]>([
    ['a task that failed is told to the owner', { type: 'rxmcp.child.error', id: 't1', error: BOOM }, [{ type: 'emit', event: { type: 'task-failed', taskId: 't1', error: BOOM } }]],
    ['a task that ended is nothing to tell', { type: 'rxmcp.child.done', id: 't1', output: task('completed') }, []],
  ])('%s', (_, message, effects) => {
    expect(tasksLogic.transition(null, message)[1]).toEqual(effects)
  })
})

describe('taskWork', () => {
  it('turns the last value into complete at the time the work completes, and follows unsubscription', () => {
    const testScheduler = createTestScheduler()
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const now = () => testScheduler.now()
      const work = cold('-a-b-|')
      const failed = cold('-a-#', undefined, BOOM)
      const empty = cold('--|')
      const endless = cold('-a---')
      expectObservable(taskWork(work, now)).toBe('-----(c|)', { c: { type: 'complete', result: 'b', at: 5 } })
      expectObservable(taskWork(failed, now)).toBe('---(f|)', { f: { type: 'fail', error: BOOM, at: 3 } })
      expectObservable(taskWork(empty, now)).toBe('--(f|)', { f: { type: 'fail', error: NO_RESULT, at: 2 } })
      expectObservable(taskWork(cold('-x|'), now, result => result === 'x')).toBe('--(f|)', { f: { type: 'fail-with-result', result: 'x', at: 2 } })
      expectObservable(taskWork(endless, now), '^--!').toBe('----')
      expectSubscriptions(endless.subscriptions).toBe('^--!')
    })
  })
})

/** A task actor under a tasks actor, on a virtual clock, with what it emits and the inspection events. */
function spawnTask(input: Partial<TaskInput> = {}) {
  const scheduler = new VirtualTimeScheduler()
  const system = createActorSystem({ name: 'server', scheduler })
  const inspected: ActorInspectionEvent[] = []
  system.inspect.subscribe(event => inspected.push(event))
  const failures: unknown[] = []
  const tasks = system.spawn(tasksLogic, { id: 'tasks', systemId: 'tasks', onEvent: event => failures.push(event) })
  const events: TaskEvent[] = []
  const logic = taskLogic as ActorLogic<TaskActorState, TaskLogicMessage, TaskInput>
  const ref = system.spawn(logic, { parent: tasks, id: 't1', input: { ...INPUT, createdAt: 0, ...input }, onEvent: event => events.push(event as TaskEvent) })
  const snapshots: Snapshot<TaskActorState>[] = []
  ref.snapshots.subscribe(snapshot => snapshots.push(snapshot))
  return { scheduler, system, tasks, ref, events, snapshots, inspected, failures }
}

describe('a task actor in a system', () => {
  it('is done with its final task once terminal, its work stopped', () => {
    const work = new Subject<TaskWorkMessage>()
    const { ref, snapshots, inspected } = spawnTask()
    ref.send({ type: 'rxmcp.task.start', at: 0, work })
    expect(work.observed).toBe(true)
    work.next({ type: 'status', statusMessage: 'half', at: 10 })
    work.next({ type: 'complete', result: 'r', at: 20 })
    expect(work.observed).toBe(false)
    expect(snapshots.at(-1)).toEqual({ status: 'done', state: state('completed', true, { createdAt: 0, lastUpdatedAt: 20, result: 'r' }), output: task('completed', { createdAt: 0, lastUpdatedAt: 20, result: 'r' }) })
    expect(inspected.filter(event => event.type === 'rxmcp.actor.spawned' || event.type === 'rxmcp.actor.ended')).toEqual([
      { type: 'rxmcp.actor.spawned', actor: 'server/tasks', parent: undefined, logic: 'tasks' },
      { type: 'rxmcp.actor.spawned', actor: 'server/tasks/t1', parent: 'server/tasks', logic: 'task' },
      { type: 'rxmcp.actor.spawned', actor: 'server/tasks/t1/work', parent: 'server/tasks/t1', logic: 'work' },
      { type: 'rxmcp.actor.ended', actor: 'server/tasks/t1/work', status: 'stopped' },
      { type: 'rxmcp.actor.ended', actor: 'server/tasks/t1', status: 'done' },
    ])
  })

  it('expires at its TTL in virtual time: the expired event, status stopped, the work unsubscribed', () => {
    const work = new Subject<TaskWorkMessage>()
    const { ref, scheduler, events, snapshots } = spawnTask({ ttlMs: 1000 })
    ref.send({ type: 'rxmcp.task.start', at: 0, work })
    scheduler.maxFrames = 999
    scheduler.flush()
    expect(snapshots.at(-1)?.status).toBe('active')
    scheduler.maxFrames = 1000
    scheduler.flush()
    expect(events).toEqual([{ type: 'expired', task: task('working', { createdAt: 0, lastUpdatedAt: 0, ttlMs: 1000 }) }])
    expect(snapshots.at(-1)?.status).toBe('stopped')
    expect(work.observed).toBe(false)
  })

  it('sets no timer left behind once done', () => {
    const { ref, scheduler } = spawnTask({ ttlMs: 1000 })
    ref.send({ type: 'rxmcp.task.start', at: 0, work: taskWork(of('r'), () => scheduler.now()) })
    expect(scheduler.actions).toHaveLength(0)
  })

  it('is stopped, with its work, when its parent stops', () => {
    const work = new Subject<TaskWorkMessage>()
    const { ref, tasks, snapshots } = spawnTask()
    ref.send({ type: 'rxmcp.task.start', at: 0, work })
    tasks.stop()
    expect(work.observed).toBe(false)
    expect(snapshots.at(-1)?.status).toBe('stopped')
  })

  it('fails with its work\'s error when the work errors outside taskWork, and its parent tells the owner nothing (the task ended failed)', () => {
    const work = new Subject<TaskWorkMessage>()
    const { ref, events, failures } = spawnTask()
    ref.send({ type: 'rxmcp.task.start', at: 0, work })
    work.error(BOOM)
    expect(events.at(-1)).toEqual({ type: 'changed', task: task('failed', { createdAt: 0, lastUpdatedAt: 0, error: BOOM, statusMessage: 'boom' }) })
    expect(failures).toEqual([])
  })
})
