import { BehaviorSubject, Observable } from '../lib/rx.ts'

/**
 * What a behaviour returns: the next state, or the next state with effects to run after it is
 * stored (effects may send messages, including to this actor; those queue behind the current one).
 */
export type Step<S> = S | readonly [S, readonly Effect[]]

/** A side effect, run after the state it came with is in place. */
export type Effect = () => void

/** A pure behaviour: `(state, message) -> next state [+ effects]`. */
export type Behaviour<S, M> = (state: S, message: M) => Step<S>

/** What happens when a behaviour or an effect throws. */
export type SupervisionStrategy = 'resume' | 'restart' | 'stop'

/** An inspection event of an actor. */
export type ActorInspectionEvent<S, M> =
  | { type: 'rxmcp.actor.message'; actor: string; message: M }
  | { type: 'rxmcp.actor.state'; actor: string; state: S }
  | { type: 'rxmcp.actor.error'; actor: string; error: unknown; strategy: SupervisionStrategy }
  | { type: 'rxmcp.actor.stopped'; actor: string }

/** Options of {@link createActor}. */
export interface ActorOptions<S, M> {
  /** A name for inspection and errors. */
  name?: string
  /** Supervision: keep the state (`resume`, default), go back to the initial one (`restart`), or stop. */
  supervision?: SupervisionStrategy
  /** Runs once when the actor stops, after its last message. */
  onStop?: (state: S) => void
  inspect?: (event: ActorInspectionEvent<S, M>) => void
  /** Where failures go after supervision handled them. */
  reportError?: (error: unknown) => void
}

/** A running actor. */
export interface ActorRef<S, M> extends AsyncDisposable {
  readonly name: string
  /** Queues a message. Messages are handled one at a time, in order. Ignored once stopped. */
  send(message: M): void
  /** The current state. */
  readonly state: S
  /** The state now and after every change; completes when the actor stops. */
  readonly states: Observable<S>
  readonly isStopped: boolean
  /** Stops after the messages already queued; resolves once stopped. */
  stop(): Promise<void>
}

/**
 * Starts an actor: a mailbox, a state, a behaviour and a supervisor.
 *
 * Messages are processed one at a time; a message sent while another is processed (from an effect,
 * say) queues behind it, so a behaviour never runs re-entrantly. A behaviour or effect that throws
 * is handled by the supervision strategy and never escapes `send`.
 *
 * @example
 * const counter = createActor(0, (n, message: 'inc' | 'dec') => message === 'inc' ? n + 1 : n - 1)
 * counter.send('inc')
 * counter.state // 1
 */
export function createActor<S, M>(initial: S, behaviour: Behaviour<S, M>, options: ActorOptions<S, M> = {}): ActorRef<S, M> {
  return new Actor(initial, behaviour, options)
}

let actorCount = 0

class Actor<S, M> implements ActorRef<S, M> {
  readonly name: string
  readonly #initial: S
  readonly #behaviour: Behaviour<S, M>
  readonly #options: ActorOptions<S, M>
  readonly #state: BehaviorSubject<S>
  /** The mailbox: messages waiting while another is processed. */
  readonly #mailbox: M[] = []
  #isProcessing = false
  #isStopped = false

  constructor(initial: S, behaviour: Behaviour<S, M>, options: ActorOptions<S, M>) {
    this.name = options.name ?? `actor-${++actorCount}`
    this.#initial = initial
    this.#behaviour = behaviour
    this.#options = options
    this.#state = new BehaviorSubject(initial)
  }

  get state(): S { return this.#state.value }
  get states(): Observable<S> { return this.#state.asObservable() }
  get isStopped(): boolean { return this.#isStopped }

  send(message: M): void {
    if (this.#isStopped) return
    this.#mailbox.push(message)
    if (!this.#isProcessing) this.#drain()
  }

  #drain(): void {
    this.#isProcessing = true
    try {
      while (this.#mailbox.length > 0 && !this.#isStopped) this.#handle(this.#mailbox.shift()!)
    } finally {
      this.#isProcessing = false
    }
  }

  #handle(message: M): void {
    const inspect = this.#options.inspect
    inspect?.({ type: 'rxmcp.actor.message', actor: this.name, message })
    let effects: readonly Effect[] = NO_EFFECTS
    try {
      const step = this.#behaviour(this.#state.value, message)
      let next: S
      if (isStepWithEffects(step)) [next, effects] = step
      else next = step as S
      if (!Object.is(next, this.#state.value)) {
        this.#state.next(next)
        inspect?.({ type: 'rxmcp.actor.state', actor: this.name, state: next })
      }
    } catch (error) {
      return this.#supervise(error)
    }
    for (const effect of effects) {
      try { effect() } catch (error) { this.#supervise(error) }
    }
  }

  #supervise(error: unknown): void {
    const strategy = this.#options.supervision ?? 'resume'
    this.#options.inspect?.({ type: 'rxmcp.actor.error', actor: this.name, error, strategy })
    this.#options.reportError?.(error)
    if (strategy === 'restart') this.#state.next(this.#initial)
    else if (strategy === 'stop') this.#halt()
  }

  #halt(): void {
    if (this.#isStopped) return
    this.#isStopped = true
    this.#mailbox.length = 0
    try { this.#options.onStop?.(this.#state.value) } catch (error) { this.#options.reportError?.(error) }
    this.#options.inspect?.({ type: 'rxmcp.actor.stopped', actor: this.name })
    this.#state.complete()
  }

  async stop(): Promise<void> {
    if (this.#isProcessing) await Promise.resolve()
    while (this.#mailbox.length > 0 && !this.#isStopped) this.#handle(this.#mailbox.shift()!)
    this.#halt()
  }

  async [Symbol.asyncDispose](): Promise<void> { await this.stop() }
}

const NO_EFFECTS: readonly Effect[] = []

function isStepWithEffects<S>(step: Step<S>): step is readonly [S, readonly Effect[]] {
  return Array.isArray(step) && step.length === 2 && Array.isArray(step[1]) && STEP_MARK.has(step)
}

/** Tuples made by {@link withEffects}, so a state that is itself an array is never mistaken for one. */
const STEP_MARK = new WeakSet<object>()

/**
 * Pairs a next state with effects, for a behaviour's return value.
 * @example
 * (state, message) => withEffects({ ...state, isOpen: false }, [() => socket.close()])
 */
export function withEffects<S>(state: S, effects: readonly Effect[]): Step<S> {
  const step = [state, effects] as const
  STEP_MARK.add(step)
  return step
}
