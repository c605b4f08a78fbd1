import type { Observable, SchedulerLike } from '../rx.ts'
import type { ActorLogic, ActorStatus, Effect, Snapshot, Supervision } from './logic.ts'

/** The runtime's contract: what its users hold (lib/actor/system.ts implements it). */

/** An event of `system.inspect`: every spawn, message, transition, failure, restart and end. */
export type ActorInspectionEvent =
  | { readonly type: 'rxmcp.actor.spawned'; readonly actor: string; readonly parent: string | undefined; readonly logic: string }
  | { readonly type: 'rxmcp.actor.message'; readonly actor: string; readonly message: unknown }
  | { readonly type: 'rxmcp.actor.transition'; readonly actor: string; readonly state: unknown; readonly effects: readonly Effect[] }
  | { readonly type: 'rxmcp.actor.failed'; readonly actor: string; readonly error: unknown; readonly strategy: Supervision['strategy'] }
  | { readonly type: 'rxmcp.actor.restarting'; readonly actor: string; readonly attempt: number; readonly delay: number }
  | { readonly type: 'rxmcp.actor.ended'; readonly actor: string; readonly status: ActorStatus }
  /** A message nobody could take: to a parent an actor has not, a child it has not, or an actor that ended. */
  | { readonly type: 'rxmcp.actor.dead-letter'; readonly actor: string; readonly message: unknown }

/** A running actor, as others hold it: they send to it and watch its snapshots; they never read its state. */
export interface ActorRef<M, S = unknown> {
  /** Its name among its parent's children (or the system's roots). */
  readonly id: string
  /** `system/parent/.../id`: unique in the system while the actor lives. */
  readonly path: string
  /** Queues a message; messages are handled one at a time, in order. Dropped (a dead letter) once the actor ended. */
  send(message: M): void
  /** The snapshot now and after each change; completes when the actor ends. */
  readonly snapshots: Observable<Snapshot<S>>
  /** The actor's `emit` effects; completes when the actor ends. */
  readonly events: Observable<unknown>
  /** Stops the actor (and its children first, in the order they were spawned); status `stopped`. */
  stop(): void
}

/** How to spawn an actor from outside a transition (an owner bridging I/O, or a root). */
export interface SpawnOptions<I> {
  /**
   * Its name among its parent's children; default the logic's name and a counter. A number (a
   * request id) is formatted when the name is first read, which most actors never need.
   */
  id?: string | number
  input?: I
  /** The parent: the actor becomes its child (stopped with it, supervised by it). Default: a root of the system. */
  parent?: ActorRef<never>
  /** What happens when it fails (default `stop`). */
  supervision?: Supervision
  /** Registers it in the system under this name. */
  systemId?: string
  /**
   * Receives its `emit` effects, synchronously, in order: where the owner does I/O. The second
   * argument is the input it was spawned with, so one handler serves many actors without a closure
   * each (a connection's requests share one).
   */
  onEvent?: (event: unknown, input: I) => void
  /**
   * Whether its parent hears `rxmcp.child.done` when it ends done (default true). A parent whose
   * logic ignores its children's outputs (a session, of its requests) spares the message.
   */
  tellsDone?: boolean
}

/** One actor system per server, client and host: a registry, a scheduler, an inspection stream. */
export interface ActorSystem {
  readonly name: string
  /** Where every timer of every actor of this system runs. */
  readonly scheduler: SchedulerLike
  spawn<S, M, I = undefined>(logic: ActorLogic<S, M, I>, options?: SpawnOptions<I>): ActorRef<M, S>
  /** The actor registered under `systemId`, while it lives. */
  get<M = unknown>(systemId: string): ActorRef<M> | undefined
  /** Every spawn, message, transition, failure, restart and end, as events; built only while subscribed. */
  readonly inspect: Observable<ActorInspectionEvent>
  /** Stops every root actor, in spawn order (each after its children). */
  stop(): void
}

/** Options of {@link createActorSystem}. */
export interface ActorSystemOptions {
  /** The first segment of every path (default `system`). */
  name?: string
  /** Where timers run (default RxJS's async scheduler); a `TestScheduler` in tests. */
  scheduler?: SchedulerLike
  /** Where a root actor's failure goes (a child's goes to its parent). */
  reportError?: (error: unknown, actor: string) => void
}
