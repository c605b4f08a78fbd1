import { describe, expect, it } from 'vitest'
import { Subject, VirtualTimeScheduler, toArray, lastValueFrom } from 'rxjs'
import {
  NONE, backoff, backoffDelay, createActor, createActorSystem, effect, fromObservable,
  type ActorInspectionEvent, type ActorLogic, type ChildMessage, type Effect, type Snapshot, type Step, type Supervision,
} from '../../actors/actor.ts'

type CounterMessage = { type: 'inc' } | { type: 'boom' } | { type: 'finish' } | { type: 'later'; ms: number } | { type: 'tell'; text: string }

const counter: ActorLogic<number, CounterMessage, number | undefined> = {
  name: 'counter',
  initial: start => start ?? 0,
  transition: (n, message): Step<number> => {
    switch (message.type) {
      case 'inc': return [n + 1, NONE]
      case 'boom': throw new Error(`boom at ${n}`)
      case 'finish': return [n, [effect.done(n)]]
      case 'later': return [n, [effect.timer('later', message.ms, { type: 'inc' })]]
      case 'tell': return [n, [effect.emit(message.text), effect.sendParent({ type: 'heard', text: message.text })]]
    }
  },
}

describe('actor logic is a pure transition, tested by a table', () => {
  it.each<[string, number, CounterMessage, number, readonly Effect[]]>([
    ['inc adds one', 1, { type: 'inc' }, 2, NONE],
    ['finish ends with the count', 3, { type: 'finish' }, 3, [{ type: 'done', output: 3 }]],
    ['later starts a timer, as data', 0, { type: 'later', ms: 50 }, 0, [{ type: 'timer', id: 'later', delay: 50, message: { type: 'inc' } }]],
    ['tell emits and tells the parent', 0, { type: 'tell', text: 'hi' }, 0, [{ type: 'emit', event: 'hi' }, { type: 'send', to: 'parent', message: { type: 'heard', text: 'hi' } }]],
  ])('%s', (_, state, message, next, effects) => {
    expect(counter.transition(state, message)).toEqual([next, effects])
  })
})

describe('the runtime', () => {
  it('handles messages in order, one at a time, and publishes snapshots', async () => {
    const actor = createActor(counter, { input: 5 })
    const snapshots = lastValueFrom(actor.snapshots.pipe(toArray()))
    actor.send({ type: 'inc' })
    actor.send({ type: 'finish' })
    actor.send({ type: 'inc' })
    expect(await snapshots).toEqual([
      { status: 'active', state: 5 },
      { status: 'active', state: 6 },
      { status: 'done', state: 6, output: 6 },
    ] satisfies Snapshot<number>[])
  })

  it('runs timers on the injected scheduler, and cancels them when the actor ends', () => {
    const scheduler = new VirtualTimeScheduler()
    const system = createActorSystem({ scheduler })
    const actor = system.spawn(counter)
    const seen: number[] = []
    actor.snapshots.subscribe(snapshot => seen.push(snapshot.state))
    actor.send({ type: 'later', ms: 100 })
    actor.send({ type: 'later', ms: 200 })
    scheduler.flush()
    expect(seen).toEqual([0, 1])
    const other = system.spawn(counter, { id: 'other' })
    const states: number[] = []
    other.snapshots.subscribe(snapshot => states.push(snapshot.state))
    other.send({ type: 'later', ms: 100 })
    other.stop()
    scheduler.flush()
    expect(states).toEqual([0, 0])
  })

  it('gives emitted events to the owner and completes them when the actor ends', async () => {
    const heard: unknown[] = []
    const actor = createActor(counter, { onEvent: event => heard.push(event) })
    const events = lastValueFrom(actor.events.pipe(toArray()))
    actor.send({ type: 'tell', text: 'a' })
    actor.send({ type: 'tell', text: 'b' })
    actor.stop()
    expect(heard).toEqual(['a', 'b'])
    expect(await events).toEqual(['a', 'b'])
  })
})

type ParentState = { heard: unknown[] }
type ParentMessage = ChildMessage | { type: 'spawn'; id: string; supervision?: Supervision } | { type: 'heard'; text: string } | { type: 'to-child'; id: string; message: CounterMessage } | { type: 'stop-child'; id: string }

const parent: ActorLogic<ParentState, ParentMessage> = {
  name: 'parent',
  initial: () => ({ heard: [] }),
  transition: (state, message): Step<ParentState> => {
    switch (message.type) {
      case 'spawn': return [state, [effect.spawn(message.id, counter, { supervision: message.supervision })]]
      case 'to-child': return [state, [effect.send({ child: message.id }, message.message)]]
      case 'stop-child': return [state, [effect.stop(message.id)]]
      default: return [{ heard: [...state.heard, message] }, NONE]
    }
  },
}

function watch(system: ReturnType<typeof createActorSystem>): ActorInspectionEvent[] {
  const events: ActorInspectionEvent[] = []
  system.inspect.subscribe(event => events.push(event))
  return events
}

describe('supervision, per strategy', () => {
  it('stop: the child ends in error and the parent is told', () => {
    const system = createActorSystem()
    const owner = system.spawn(parent, { id: 'p' })
    let last: Snapshot<ParentState> | undefined
    owner.snapshots.subscribe(snapshot => { last = snapshot })
    owner.send({ type: 'spawn', id: 'c' })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'inc' } })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'boom' } })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'inc' } })
    expect(last!.state.heard).toEqual([{ type: 'rxmcp.child.error', id: 'c', error: new Error('boom at 1') }])
    expect(last!.status).toBe('active')
  })

  it('restart: the child starts over after the backoff, in virtual time, and gives up after the retries', () => {
    const scheduler = new VirtualTimeScheduler()
    const system = createActorSystem({ scheduler })
    const events = watch(system)
    const owner = system.spawn(parent, { id: 'p' })
    let last: Snapshot<ParentState> | undefined
    owner.snapshots.subscribe(snapshot => { last = snapshot })
    const policy = backoff({ initial: 100, factor: 2, max: 1_000, retries: 2 })
    owner.send({ type: 'spawn', id: 'c', supervision: { strategy: 'restart', backoff: policy } })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'inc' } })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'boom' } })
    // While it waits, a message to it is a dead letter.
    owner.send({ type: 'to-child', id: 'c', message: { type: 'inc' } })
    expect(scheduler.now()).toBe(0)
    scheduler.maxFrames = 99
    scheduler.flush()
    expect(events.filter(event => event.type === 'rxmcp.actor.restarting')).toEqual([{ type: 'rxmcp.actor.restarting', actor: 'system/p/c', attempt: 1, delay: 100 }])
    scheduler.maxFrames = Infinity
    scheduler.flush()
    expect(scheduler.now()).toBe(100)
    owner.send({ type: 'to-child', id: 'c', message: { type: 'tell', text: 'back at 0' } })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'boom' } })
    scheduler.flush()
    expect(scheduler.now()).toBe(300)
    owner.send({ type: 'to-child', id: 'c', message: { type: 'boom' } })
    expect(events.filter(event => event.type === 'rxmcp.actor.restarting').map(event => (event as { delay: number }).delay)).toEqual([100, 200])
    expect(events.filter(event => event.type === 'rxmcp.actor.dead-letter')).toHaveLength(1)
    expect(last!.state.heard).toEqual([
      { type: 'rxmcp.child.restarting', id: 'c', attempt: 1, delay: 100, error: new Error('boom at 1') },
      { type: 'heard', text: 'back at 0' },
      { type: 'rxmcp.child.restarting', id: 'c', attempt: 2, delay: 200, error: new Error('boom at 0') },
      { type: 'rxmcp.child.error', id: 'c', error: new Error('boom at 0') },
    ])
  })

  it('restart: a run that lasted stableMs resets the count', () => {
    const scheduler = new VirtualTimeScheduler()
    const system = createActorSystem({ scheduler })
    const events = watch(system)
    const owner = system.spawn(parent, { id: 'p' })
    owner.send({ type: 'spawn', id: 'c', supervision: { strategy: 'restart', backoff: backoff({ initial: 10, retries: 1 }), stableMs: 1_000 } })
    for (let round = 0; round < 3; round++) {
      owner.send({ type: 'to-child', id: 'c', message: { type: 'boom' } })
      scheduler.flush()
      owner.send({ type: 'to-child', id: 'c', message: { type: 'later', ms: 1_000 } })
      scheduler.flush()
    }
    expect(events.filter(event => event.type === 'rxmcp.actor.restarting')).toHaveLength(3)
  })

  it('escalate: the parent fails with the child\'s error, and its own parent decides', () => {
    const system = createActorSystem()
    const grand = system.spawn(parent, { id: 'g' })
    let heard: unknown[] = []
    grand.snapshots.subscribe(snapshot => { heard = snapshot.state.heard })
    grand.send({ type: 'spawn', id: 'p' })
    // 'p' is spawned with the default (stop) by 'g'; its child escalates into it.
    const p = system.get('x')
    expect(p).toBeUndefined()
    const events = watch(system)
    grand.send({ type: 'to-child', id: 'p', message: { type: 'inc' } })
    const escalating: ActorLogic<ParentState, ParentMessage> = { ...parent, name: 'escalating' }
    const middle = system.spawn(escalating, { id: 'm', parent: grand as never })
    middle.send({ type: 'spawn', id: 'c', supervision: { strategy: 'escalate' } })
    middle.send({ type: 'to-child', id: 'c', message: { type: 'boom' } })
    expect(heard).toContainEqual({ type: 'rxmcp.child.error', id: 'm', error: new Error('boom at 0') })
    expect(events.filter(event => event.type === 'rxmcp.actor.ended').map(event => [event.actor, (event as { status: string }).status]))
      .toEqual([['system/g/m/c', 'error'], ['system/g/m', 'error']])
  })

  it('resume: a throwing transition is skipped and the state kept', () => {
    const system = createActorSystem()
    const owner = system.spawn(parent, { id: 'p' })
    owner.send({ type: 'spawn', id: 'c', supervision: { strategy: 'resume' } })
    const events = watch(system)
    owner.send({ type: 'to-child', id: 'c', message: { type: 'inc' } })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'boom' } })
    owner.send({ type: 'to-child', id: 'c', message: { type: 'tell', text: 'x' } })
    expect(events.filter(event => event.type === 'rxmcp.actor.transition' && event.actor === 'system/p/c').map(event => (event as { state: number }).state)).toEqual([1, 1])
  })

  it('a root that fails goes to the system\'s reportError', () => {
    const errors: unknown[] = []
    const actor = createActor(counter, { reportError: error => errors.push(error) })
    actor.send({ type: 'boom' })
    expect(errors).toEqual([new Error('boom at 0')])
  })
})

describe('stopping', () => {
  it('stopping a parent stops its children first, in the order they were spawned, and nothing reaches them after', () => {
    const system = createActorSystem()
    const events = watch(system)
    const owner = system.spawn(parent, { id: 'p' })
    for (const id of ['a', 'b', 'c']) owner.send({ type: 'spawn', id })
    owner.send({ type: 'to-child', id: 'b', message: { type: 'inc' } })
    owner.stop()
    owner.send({ type: 'to-child', id: 'a', message: { type: 'inc' } })
    expect(events.filter(event => event.type === 'rxmcp.actor.ended').map(event => event.actor)).toEqual(['system/p/a', 'system/p/b', 'system/p/c', 'system/p'])
    expect(events.at(-1)).toEqual({ type: 'rxmcp.actor.dead-letter', actor: 'system/p', message: { type: 'to-child', id: 'a', message: { type: 'inc' } } })
  })

  it('a stopped child leaves its parent\'s table, so its id can be spawned again', () => {
    const system = createActorSystem()
    const events = watch(system)
    const owner = system.spawn(parent, { id: 'p' })
    owner.send({ type: 'spawn', id: 'a' })
    owner.send({ type: 'stop-child', id: 'a' })
    owner.send({ type: 'spawn', id: 'a' })
    expect(events.filter(event => event.type === 'rxmcp.actor.spawned').map(event => event.actor)).toEqual(['system/p', 'system/p/a', 'system/p/a'])
    expect(events.filter(event => event.type === 'rxmcp.actor.ended').map(event => event.actor)).toEqual(['system/p/a'])
  })

  it('system.stop stops every root, and the registry forgets them', () => {
    const system = createActorSystem()
    system.spawn(counter, { systemId: 'one' })
    system.spawn(counter, { systemId: 'two' })
    expect(system.get('one')).toBeDefined()
    system.stop()
    expect(system.get('one')).toBeUndefined()
    expect(system.get('two')).toBeUndefined()
  })
})

describe('fromObservable', () => {
  it('owns its source: values go to the parent, completion is done, a restart resubscribes, the end unsubscribes', () => {
    const scheduler = new VirtualTimeScheduler()
    const system = createActorSystem({ scheduler })
    const sources: Subject<{ type: 'heard'; text: string }>[] = []
    const work = fromObservable('work', () => { const source = new Subject<{ type: 'heard'; text: string }>(); sources.push(source); return source })
    const owner: ActorLogic<ParentState, ParentMessage | { type: 'go' }> = {
      ...parent,
      transition: (state, message) => message.type === 'go'
        ? [state, [effect.spawn('work', work, { supervision: { strategy: 'restart', backoff: backoff({ initial: 5, retries: 3 }) } })]]
        : parent.transition(state, message as ParentMessage),
    }
    const actor = system.spawn(owner, { id: 'task' })
    let heard: unknown[] = []
    actor.snapshots.subscribe(snapshot => { heard = snapshot.state.heard })
    actor.send({ type: 'go' })
    sources[0]!.next({ type: 'heard', text: 'one' })
    sources[0]!.error(new Error('lost'))
    expect(sources).toHaveLength(1)
    scheduler.flush()
    expect(sources).toHaveLength(2)
    sources[1]!.next({ type: 'heard', text: 'two' })
    actor.stop()
    expect(sources[1]!.observed).toBe(false)
    expect(heard).toEqual([
      { type: 'heard', text: 'one' },
      { type: 'rxmcp.child.restarting', id: 'work', attempt: 1, delay: 5, error: new Error('lost') },
      { type: 'heard', text: 'two' },
    ])
  })

  it('completes as done with its last value', () => {
    const system = createActorSystem()
    const source = new Subject<{ type: 'heard'; text: string }>()
    const owner: ActorLogic<ParentState, ParentMessage | { type: 'go' }> = {
      ...parent,
      transition: (state, message) => message.type === 'go' ? [state, [effect.spawn('work', fromObservable('work', () => source))]] : parent.transition(state, message as ParentMessage),
    }
    const actor = system.spawn(owner)
    let heard: unknown[] = []
    actor.snapshots.subscribe(snapshot => { heard = snapshot.state.heard })
    actor.send({ type: 'go' })
    source.next({ type: 'heard', text: 'last' })
    source.complete()
    expect(heard).toEqual([{ type: 'heard', text: 'last' }, { type: 'rxmcp.child.done', id: 'work', output: { type: 'heard', text: 'last' } }])
  })
})

describe('inspection', () => {
  it('builds nothing while nobody listens, and shows spawns, messages, transitions and ends while someone does', () => {
    const system = createActorSystem({ name: 'server' })
    const quiet = system.spawn(counter, { id: 'quiet' })
    quiet.send({ type: 'inc' })
    const events = watch(system)
    const actor = system.spawn(counter, { id: 'loud' })
    actor.send({ type: 'finish' })
    expect(events).toEqual([
      { type: 'rxmcp.actor.spawned', actor: 'server/loud', parent: undefined, logic: 'counter' },
      { type: 'rxmcp.actor.message', actor: 'server/loud', message: { type: 'finish' } },
      { type: 'rxmcp.actor.transition', actor: 'server/loud', state: 0, effects: [{ type: 'done', output: 0 }] },
      { type: 'rxmcp.actor.ended', actor: 'server/loud', status: 'done' },
    ])
  })
})

describe('backoff', () => {
  it.each([
    [{ initial: 100, factor: 2, max: 1_000 }, [100, 200, 400, 800, 1_000, 1_000]],
    [{ initial: 500, factor: 3, max: 10_000 }, [500, 1_500, 4_500, 10_000, 10_000, 10_000]],
    [{ initial: 0, factor: 2, max: 0 }, [0, 0, 0, 0, 0, 0]],
  ])('%j waits %j', (options, waits) => {
    const policy = backoff(options)
    expect(waits.map((_, attempt) => backoffDelay(policy, attempt))).toEqual(waits)
  })

  it('spreads a wait by jitter, within [w x (1 - jitter), w]', () => {
    const policy = backoff({ initial: 1_000, jitter: 0.5 })
    expect(backoffDelay(policy, 0, () => 0)).toBe(1_000)
    expect(backoffDelay(policy, 0, () => 1)).toBe(500)
    expect(backoffDelay(policy, 0, () => 0.5)).toBe(750)
  })

  it.each([
    [{ initial: -1 }], [{ initial: Number.NaN }], [{ max: Infinity }], [{ factor: 0.5 }], [{ jitter: 2 }], [{ retries: -1 }], [{ retries: 1.5 }],
  ])('refuses %j', options => {
    expect(() => backoff(options)).toThrow(RangeError)
  })
})

describe('children spawned from outside', () => {
  it('may reuse the id of a child still ending: the index points to the newer, and the older leaves without taking it', () => {
    const system = createActorSystem()
    const events = watch(system)
    const owner = system.spawn(parent, { id: 'p' })
    owner.send({ type: 'spawn', id: 'named' })
    const first = system.spawn(counter, { id: '7', parent: owner as never })
    const second = system.spawn(counter, { id: '7', parent: owner as never })
    first.stop()
    owner.send({ type: 'to-child', id: '7', message: { type: 'tell', text: 'to the newer' } })
    expect(events.filter(event => event.type === 'rxmcp.actor.message' && event.actor === 'system/p/7')).toEqual([
      { type: 'rxmcp.actor.message', actor: 'system/p/7', message: { type: 'tell', text: 'to the newer' } },
    ])
    second.stop()
    // A logic's own children keep unique names: spawning a second 'named' fails the parent.
    owner.send({ type: 'spawn', id: 'named' })
    expect(events.filter(event => event.type === 'rxmcp.actor.failed').map(event => [event.actor, (event as { error: Error }).error.message]))
      .toEqual([['system/p', 'spawn: system/p has a child "named" already']])
  })
})
