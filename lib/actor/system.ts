import { BehaviorSubject, Observable, Subject, asyncScheduler, type SchedulerLike, type Subscription } from '../rx.ts'
import { backoffDelay } from '../operators/retry-policy.ts'
import {
  NONE, type ActorLogic, type ActorSelf, type ActorStatus, type Address, type AnyActorLogic, type ChildMessage, type Effect,
  type Snapshot, type Supervision,
} from './logic.ts'
import type { ActorInspectionEvent, ActorRef, ActorSystem, ActorSystemOptions, SpawnOptions } from './contract.ts'

export type { ActorInspectionEvent, ActorRef, ActorSystem, ActorSystemOptions, SpawnOptions } from './contract.ts'

/**
 * The actor runtime: runs logic (lib/actor/logic.ts) in actors with a mailbox, parents and
 * children, supervision, timers on an injected scheduler, a registry and an inspection stream.
 *
 * Costs, since a request is an actor: spawning allocates the actor and nothing else; a child table,
 * a timer table, a mailbox, the snapshot and event streams are each made when first needed; an
 * inspection event is built only while someone subscribes to `system.inspect`.
 */


/**
 * Creates an actor system.
 *
 * @example
 * const system = createActorSystem({ scheduler })
 * const counter = system.spawn({ name: 'counter', initial: () => 0, transition: (n, m: 'inc') => [n + 1, NONE] })
 * counter.send('inc')
 */
export function createActorSystem(options: ActorSystemOptions = {}): ActorSystem {
  return new System(options)
}

/**
 * Spawns `logic` as the root of a system of its own (for a lone actor, and tests).
 * @example
 * const actor = createActor(counterLogic)
 */
export function createActor<S, M, I = undefined>(logic: ActorLogic<S, M, I>, options: SpawnOptions<I> & ActorSystemOptions = {}): ActorRef<M, S> {
  return new System(options).spawn(logic, options)
}

class System implements ActorSystem {
  readonly name: string
  readonly scheduler: SchedulerLike
  readonly reportError: (error: unknown, actor: string) => void
  readonly #registry = new Map<string, Actor>()
  readonly #roots = new ActorList()
  #inspect: Subject<ActorInspectionEvent> | undefined
  #count = 0

  constructor(options: ActorSystemOptions) {
    this.name = options.name ?? 'system'
    this.scheduler = options.scheduler ?? asyncScheduler
    this.reportError = options.reportError ?? (() => {})
  }

  /** Whether anyone reads inspection events now (checked before one is built). */
  get isInspected(): boolean { return this.#inspect?.observed === true }

  get inspect(): Observable<ActorInspectionEvent> {
    return (this.#inspect ??= new Subject()).asObservable()
  }

  emit(event: ActorInspectionEvent): void { this.#inspect?.next(event) }

  spawn<S, M, I>(logic: ActorLogic<S, M, I>, options: SpawnOptions<I> = {}): ActorRef<M, S> {
    const parent = options.parent as Actor | undefined
    if (parent !== undefined && !(parent instanceof Actor)) throw new TypeError('spawn: the parent must be an actor of this runtime')
    // The name is formatted when first read (inspection, an index, a parent told): a request never needs it.
    const given = options.id
    const actor = this.make(logic, given === undefined ? -++this.#count : typeof given === 'number' && given < 0 ? String(given) : given, options.input, parent, options.supervision, options.systemId,
      options.onEvent as ((event: unknown, input: unknown) => void) | undefined, options.tellsDone !== false, false)
    return actor as unknown as ActorRef<M, S>
  }

  make(logic: AnyActorLogic, id: string | number, input: unknown, parent: Actor | undefined, supervision: Supervision | undefined,
    systemId: string | undefined, onEvent: ((event: unknown, input: unknown) => void) | undefined, tellsDone: boolean,
    /** Spawned by a parent's effect: its logic addresses it by id, so the parent indexes its children. */
    byEffect: boolean): Actor {
    if (systemId !== undefined && this.#registry.has(systemId)) throw new Error(`spawn: "${systemId}" is registered already`)
    const actor = new Actor(this, logic, id, input, parent, supervision ?? STOP, systemId, onEvent, tellsDone)
    if (parent === undefined) this.#roots.append(actor)
    else parent.adopt(actor, byEffect)
    if (systemId !== undefined) this.#registry.set(systemId, actor)
    if (this.isInspected) this.emit({ type: 'rxmcp.actor.spawned', actor: actor.path, parent: parent?.path, logic: logic.name })
    actor.begin()
    return actor
  }

  forget(actor: Actor): void {
    if (actor.parent === undefined) this.#roots.remove(actor)
    if (actor.systemId !== undefined && this.#registry.get(actor.systemId) === actor) this.#registry.delete(actor.systemId)
  }

  get<M>(systemId: string): ActorRef<M> | undefined {
    return this.#registry.get(systemId) as ActorRef<M> | undefined
  }

  stop(): void {
    this.#roots.stopAll()
  }
}

const STOP: Supervision = Object.freeze({ strategy: 'stop' })

/**
 * Actors in the order they were added, linked through the actors themselves (`previous`, `next`):
 * adding and removing one allocates nothing and hashes nothing, which matters since each request
 * is an actor (a session's child, or a root when sessionless). An actor is in one list at most:
 * its parent's children, or its system's roots.
 */
class ActorList {
  first: Actor | undefined = undefined
  last: Actor | undefined = undefined

  append(actor: Actor): void {
    const last = this.last
    actor.previous = last
    if (last === undefined) this.first = actor
    else last.next = actor
    this.last = actor
  }

  remove(actor: Actor): void {
    const { previous, next } = actor
    if (previous === undefined) { if (this.first === actor) this.first = next } else previous.next = next
    if (next === undefined) { if (this.last === actor) this.last = previous } else next.previous = previous
    actor.previous = actor.next = undefined
  }

  /** Stops each, first to last; each leaves the list as it ends. */
  stopAll(): void {
    for (let actor = this.first; actor !== undefined; actor = this.first) actor.stop()
  }
}

/**
 * What few actors use: kept apart from the actor, made on first need, so spawning a request (an
 * actor on the per-message path) allocates and initializes less.
 */
class Rare {
  output: unknown = undefined
  error: unknown = undefined
  /** The children by id (see Actor's children list). */
  byId: Map<string, Actor> | undefined = undefined
  timers: Map<string, Subscription> | undefined = undefined
  snapshots: BehaviorSubject<Snapshot<unknown>> | undefined = undefined
  events: Subject<unknown> | undefined = undefined
  /** Failures in a row, for `restart`; and when the current run began (for `stableMs`). */
  restarts = 0
  runSince = 0
  restartTimer: Subscription | undefined = undefined
}

class Actor implements ActorRef<unknown, unknown>, ActorSelf {
  #status: ActorStatus = 'active'
  #state: unknown
  #rare: Rare | undefined
  /** Messages waiting while one is handled; made on the first re-entrant send. */
  #mailbox: unknown[] | undefined
  #isProcessing = false
  /** Between a failure and its restart: messages are dead letters. */
  #isRestarting = false
  /**
   * Its children, in spawn order (made with the first). The index by id is made on the first
   * lookup by id (a `send` to a child, a `stop` of one, a spawn effect, which names its child for
   * its logic), and kept from then on.
   */
  #children: ActorList | undefined
  /** Its neighbours in the list it is in (its parent's children, or the system's roots). */
  previous: Actor | undefined
  next: Actor | undefined
  #started: { unsubscribe(): void } | undefined

  constructor(
    readonly system: System,
    readonly logic: AnyActorLogic,
    /** The id as given: a number is formatted when first read; a negative one is the system's count. */
    key: string | number,
    readonly input: unknown,
    readonly parent: Actor | undefined,
    readonly supervision: Supervision,
    readonly systemId: string | undefined,
    readonly onEvent: ((event: unknown, input: unknown) => void) | undefined,
    readonly tellsDone: boolean,
  ) {
    this.#key = key
  }

  #key: string | number

  /** The rarely used part, made on first need. */
  get #more(): Rare { return this.#rare ??= new Rare() }

  get id(): string {
    const key = this.#key
    if (typeof key === 'string') return key
    return this.#key = key < 0 ? `${this.logic.name}-${-key}` : String(key)
  }

  get path(): string { return `${this.parent === undefined ? this.system.name : this.parent.path}/${this.id}` }

  get snapshots(): Observable<Snapshot<unknown>> {
    const rare = this.#more
    if (rare.snapshots === undefined) {
      rare.snapshots = new BehaviorSubject(this.#snapshot())
      if (this.#status !== 'active') rare.snapshots.complete()
    }
    return rare.snapshots.asObservable()
  }

  get events(): Observable<unknown> {
    const rare = this.#more
    if (rare.events === undefined) {
      rare.events = new Subject()
      if (this.#status !== 'active') rare.events.complete()
    }
    return rare.events.asObservable()
  }

  #snapshot(): Snapshot<unknown> {
    return this.#status === 'done' ? { status: 'done', state: this.#state, output: this.#rare?.output }
      : this.#status === 'error' ? { status: 'error', state: this.#state, error: this.#rare?.error }
        : { status: this.#status, state: this.#state }
  }

  /** Takes the initial state and starts the logic's source, if it has one. */
  begin(): void {
    try {
      this.#state = this.logic.initial(this.input)
    } catch (error) {
      this.fail(error)
      return
    }
    // Read only by `restart` (its `stableMs`): no clock read for the others, a request among them.
    if (this.supervision.strategy === 'restart') this.#more.runSince = this.system.scheduler.now()
    if (this.logic.start !== undefined) {
      this.#isProcessing = true
      try {
        const started = this.logic.start(this.input, this)
        if (this.#status === 'active' && !this.#isRestarting) this.#started = started
        else started.unsubscribe()
      } catch (error) {
        this.fail(error)
      } finally {
        this.#isProcessing = false
      }
      this.#drain()
    }
  }

  adopt(child: Actor, isNamed: boolean): void {
    const byId = isNamed ? this.#index() : this.#rare?.byId
    if (byId !== undefined) {
      // A logic names its children to address them: two of one name would be ambiguous. A child
      // spawned from outside is addressed by its reference; its id may follow one still ending
      // (a request id reused the moment it was answered), and the index points to the newer.
      if (isNamed && byId.has(child.id)) throw new Error(`spawn: ${this.path} has a child "${child.id}" already`)
      byId.set(child.id, child)
    }
    ;(this.#children ??= new ActorList()).append(child)
  }

  disown(child: Actor): void {
    this.#children!.remove(child)
    // Only `child` can hold its id here: adopt refuses a second while an index exists.
    const byId = this.#rare?.byId
    if (byId?.get(child.id) === child) byId.delete(child.id)
  }

  /** The children by id, made from the list on first need. */
  #index(): Map<string, Actor> {
    const rare = this.#more
    if (rare.byId === undefined) {
      rare.byId = new Map()
      for (let child = this.#children?.first; child !== undefined; child = child.next) rare.byId.set(child.id, child)
    }
    return rare.byId
  }

  #child(id: string): Actor | undefined {
    return this.#children?.first === undefined ? undefined : this.#index().get(id)
  }

  send(message: unknown): void {
    if (this.#status !== 'active' || this.#isRestarting) {
      if (this.system.isInspected) this.system.emit({ type: 'rxmcp.actor.dead-letter', actor: this.path, message })
      return
    }
    if (this.#isProcessing) {
      (this.#mailbox ??= []).push(message)
      return
    }
    this.#handle(message)
    this.#drain()
  }

  #drain(): void {
    const mailbox = this.#mailbox
    if (mailbox === undefined) return
    while (mailbox.length > 0 && this.#status === 'active' && !this.#isRestarting) this.#handle(mailbox.shift())
  }

  #handle(message: unknown): void {
    const system = this.system
    this.#isProcessing = true
    try {
      if (system.isInspected) system.emit({ type: 'rxmcp.actor.message', actor: this.path, message })
      let step
      try {
        step = this.logic.transition(this.#state, message)
      } catch (error) {
        this.#failed(error, true)
        return
      }
      // Indexed, not destructured: no iterator over the (often frozen, constant) step.
      const next = step[0]
      const effects = step[1]
      if (!Object.is(next, this.#state)) {
        this.#state = next
        this.#rare?.snapshots?.next(this.#snapshot())
      }
      if (system.isInspected) system.emit({ type: 'rxmcp.actor.transition', actor: this.path, state: next, effects })
      if (effects !== NONE) this.#run(effects, message)
    } finally {
      this.#isProcessing = false
    }
  }

  #run(effects: readonly Effect[], message: unknown): void {
    for (let index = 0; index < effects.length; index++) {
      if (this.#status !== 'active' || this.#isRestarting) return
      try {
        this.#perform(effects[index]!, message)
      } catch (error) {
        this.#failed(error, false)
      }
    }
  }

  #perform(effect: Effect, message: unknown): void {
    switch (effect.type) {
      case 'send': return this.#deliver(effect.to, effect.message)
      case 'spawn': {
        this.system.make(effect.logic, effect.id, effect.input, this, effect.supervision, effect.systemId, undefined, true, true)
        return
      }
      case 'stop': {
        if (effect.id === undefined) return this.#end('stopped')
        this.#child(effect.id)?.stop()
        return
      }
      case 'timer': {
        const timers = this.#more.timers ??= new Map()
        timers.get(effect.id)?.unsubscribe()
        const { id, message } = effect
        timers.set(id, this.system.scheduler.schedule(() => { timers.delete(id); this.send(message) }, effect.delay))
        return
      }
      case 'cancel-timer': {
        const timers = this.#rare?.timers
        const timer = timers?.get(effect.id)
        if (timer !== undefined) { timer.unsubscribe(); timers!.delete(effect.id) }
        return
      }
      case 'emit': return this.#emit(effect.event)
      case 'emit-message': return this.#emit(message)
      case 'done': return this.done(effect.output)
      case 'fail': return this.#failed(effect.error, false)
    }
  }

  #emit(event: unknown): void {
    this.onEvent?.(event, this.input)
    this.#rare?.events?.next(event)
  }

  #deliver(to: Address, message: unknown): void {
    const target: { send(message: unknown): void } | undefined = to === 'self' ? this
      : to === 'parent' ? this.parent
        : 'child' in to ? this.#child(to.child)
          : 'systemId' in to ? this.system.get(to.systemId)
            : to.ref as { send(message: unknown): void }
    if (target !== undefined) target.send(message)
    else if (this.system.isInspected) this.system.emit({ type: 'rxmcp.actor.dead-letter', actor: this.path, message })
  }

  sendParent(message: unknown): void { this.#deliver('parent', message) }

  done(output?: unknown): void {
    if (output !== undefined) this.#more.output = output
    this.#end('done')
  }

  fail(error: unknown): void { this.#failed(error, false) }

  /** A failure, handled by the strategy the parent declared (`thrown`: a transition threw, which `resume` may skip). */
  #failed(error: unknown, thrown: boolean): void {
    if (this.#status !== 'active' || this.#isRestarting) return
    const supervision = this.supervision
    const system = this.system
    if (system.isInspected) system.emit({ type: 'rxmcp.actor.failed', actor: this.path, error, strategy: supervision.strategy })
    switch (supervision.strategy) {
      case 'resume':
        if (thrown) return
        break
      case 'restart': {
        const now = system.scheduler.now()
        if (supervision.stableMs !== undefined && now - this.#more.runSince >= supervision.stableMs) this.#more.restarts = 0
        if (this.#more.restarts < supervision.backoff.retries) return this.#restart(supervision, error)
        break
      }
      case 'escalate': {
        this.#more.error = error
        this.#end('error', true)
        if (this.parent !== undefined) this.parent.fail(error)
        else system.reportError(error, this.path)
        return
      }
    }
    this.#more.error = error
    this.#end('error')
  }

  #restart(supervision: Extract<Supervision, { strategy: 'restart' }>, error: unknown): void {
    const rare = this.#more
    const attempt = rare.restarts++
    const delay = backoffDelay(supervision.backoff, attempt)
    this.#isRestarting = true
    this.#more.error = error
    this.#teardown()
    if (this.system.isInspected) this.system.emit({ type: 'rxmcp.actor.restarting', actor: this.path, attempt: attempt + 1, delay })
    this.parent?.send({ type: 'rxmcp.child.restarting', id: this.id, attempt: attempt + 1, delay, error } satisfies ChildMessage)
    rare.restartTimer = this.system.scheduler.schedule(() => {
      rare.restartTimer = undefined
      if (this.#status !== 'active') return
      this.#isRestarting = false
      rare.error = undefined
      this.begin()
      rare.snapshots?.next(this.#snapshot())
    }, delay)
  }

  /** Ends what the current run holds: its source, its timers, its children (in spawn order), its mail. */
  #teardown(): void {
    const started = this.#started
    this.#started = undefined
    started?.unsubscribe()
    const timers = this.#rare?.timers
    if (timers !== undefined) {
      for (const timer of timers.values()) timer.unsubscribe()
      timers.clear()
    }
    this.#children?.stopAll()
    if (this.#mailbox !== undefined) this.#mailbox.length = 0
  }

  stop(): void { this.#end('stopped') }

  /** Makes the status final: ends the run, tells the parent (unless `quiet`), completes the streams. */
  #end(status: Exclude<ActorStatus, 'active'>, quiet = false): void {
    if (this.#status !== 'active') return
    this.#status = status
    this.#isRestarting = false
    const rare = this.#rare
    rare?.restartTimer?.unsubscribe()
    this.#teardown()
    const parent = this.parent
    parent?.disown(this)
    this.system.forget(this)
    if (this.system.isInspected) this.system.emit({ type: 'rxmcp.actor.ended', actor: this.path, status })
    if (rare?.snapshots !== undefined) { rare.snapshots.next(this.#snapshot()); rare.snapshots.complete() }
    rare?.events?.complete()
    if (quiet) return
    if (status === 'done') { if (this.tellsDone) parent?.send({ type: 'rxmcp.child.done', id: this.id, output: rare?.output } satisfies ChildMessage) }
    else if (status === 'error') {
      if (parent !== undefined) parent.send({ type: 'rxmcp.child.error', id: this.id, error: rare?.error } satisfies ChildMessage)
      else this.system.reportError(rare?.error, this.path)
    }
  }

}
