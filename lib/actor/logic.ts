import type { Backoff } from '../operators/retry-policy.ts'

/**
 * Actor logic as data: what an actor is, apart from the runtime that runs it (lib/actor/system.ts).
 *
 * A logic is `{ initial, transition }`: `transition(state, message)` is a pure function that returns
 * the next state and the effects to run, and every effect is a plain object (send, spawn, stop,
 * a timer, an event for the owner, done, fail). So a transition is tested by a table: given this
 * state and this message, expect this state and these effects, with nothing run.
 */

/** Where an actor is in its life. Only `active` handles messages; the other three are final. */
export type ActorStatus = 'active' | 'done' | 'error' | 'stopped'

/** An actor as others may see it: its status, its state, and its output or error once final. */
export interface Snapshot<S> {
  readonly status: ActorStatus
  readonly state: S
  /** Set when `status` is `done` (the `done` effect's output). */
  readonly output?: unknown
  /** Set when `status` is `error`. */
  readonly error?: unknown
}

/**
 * Where a `send` effect goes: the actor itself, its parent, one of its children (by the id it was
 * spawned with), an actor registered in the system (by its `systemId`), or a reference.
 */
export type Address = 'self' | 'parent' | { readonly child: string } | { readonly systemId: string } | { readonly ref: MessageTarget }

/** Anything that takes messages (an actor's reference is one). */
export interface MessageTarget {
  send(message: never): void
}

/**
 * What a parent does when a child fails (its transition throws, it runs a `fail` effect, or its
 * Observable errors), declared by the parent when it spawns the child:
 * - `stop` (default): the child ends with status `error`; the parent gets `rxmcp.child.error`.
 * - `restart`: the child starts over from its initial state after the policy's wait on the
 *   system's scheduler, up to `backoff.retries` times in a row (a run that lasted `stableMs`
 *   resets the count); then as `stop`.
 * - `escalate`: the child ends with status `error` and the parent fails with the same error.
 * - `resume`: a throwing transition is skipped and the child keeps its state (a `fail` effect or an
 *   Observable's error still stops it).
 */
export type Supervision =
  | { readonly strategy: 'stop' }
  | { readonly strategy: 'escalate' }
  | { readonly strategy: 'resume' }
  | { readonly strategy: 'restart'; readonly backoff: Backoff; readonly stableMs?: number }

/** Spawns a child from a transition: `id` names it among its parent's children. */
export interface SpawnEffect {
  readonly type: 'spawn'
  readonly id: string
  readonly logic: AnyActorLogic
  readonly input?: unknown
  readonly supervision?: Supervision
  /** Registers the child in the system under this name (see `ActorSystem.get`). */
  readonly systemId?: string
}

/** A side effect, as data: the runtime runs it after the state it came with is in place. */
export type Effect =
  | { readonly type: 'send'; readonly to: Address; readonly message: unknown }
  | SpawnEffect
  /** Stops the child `id`, or the actor itself when `id` is absent (status `stopped`). */
  | { readonly type: 'stop'; readonly id?: string }
  /** After `delay` ms on the system's scheduler, `message` comes to the actor itself; a timer of the same id is replaced. */
  | { readonly type: 'timer'; readonly id: string; readonly delay: number; readonly message: unknown }
  | { readonly type: 'cancel-timer'; readonly id: string }
  /** An event for whoever owns the actor (its `onEvent`, its `events` stream): where I/O happens. */
  | { readonly type: 'emit'; readonly event: unknown }
  /**
   * The message being handled, handed to the owner as it is (as `emit` would with it as the event).
   * A constant, so a transition that passes messages on can return steps made once: the request
   * actor, on the per-message path, allocates no step at all.
   */
  | { readonly type: 'emit-message' }
  /** Ends the actor with status `done`; its parent gets `rxmcp.child.done` with `output`. */
  | { readonly type: 'done'; readonly output?: unknown }
  /** Ends the actor as failed: its parent's supervision decides what follows. */
  | { readonly type: 'fail'; readonly error: unknown }

/** What a parent hears from the runtime about its children, among its own messages. */
export type ChildMessage =
  | { readonly type: 'rxmcp.child.done'; readonly id: string; readonly output: unknown }
  | { readonly type: 'rxmcp.child.error'; readonly id: string; readonly error: unknown }
  /** The child failed and starts over after `delay` ms (`attempt` 1 for the first restart in a row). */
  | { readonly type: 'rxmcp.child.restarting'; readonly id: string; readonly attempt: number; readonly delay: number; readonly error: unknown }

/** A transition's answer: the next state and the effects to run, in order. */
export type Step<S> = readonly [state: S, effects: readonly Effect[]]

/**
 * An actor's logic. `M` is what it accepts (a parent's `M` includes the {@link ChildMessage}s it
 * reads; others come to it as well and a transition returns `[state, NONE]` for them).
 */
export interface ActorLogic<S, M, I = undefined> {
  /** A name for inspection (`session`, `request`, `task`). */
  readonly name: string
  /** The state an actor starts in, and starts over in on restart. */
  initial(input: I): S
  /** Pure: no I/O, no clock, no randomness (those come in messages or go out as effects). */
  transition(state: S, message: M): Step<S>
  /**
   * For logic backed by a source outside (an Observable, see `fromObservable`): started when the
   * actor starts and restarts, stopped when it ends. What it produces comes back as messages.
   */
  readonly start?: (input: I, self: ActorSelf) => { unsubscribe(): void }
}

/** What `start` may do: tell the actor's parent, end the actor. */
export interface ActorSelf {
  /** Sends a message to the actor's parent (dropped, and inspected, when it has none). */
  sendParent(message: unknown): void
  /** Ends the actor with status `done`. */
  done(output?: unknown): void
  /** Fails the actor (its parent's supervision decides). */
  fail(error: unknown): void
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyActorLogic = ActorLogic<any, any, any>

/** No effects: the one empty list every transition may return. */
export const NONE: readonly Effect[] = Object.freeze([])

/** Effect constructors, so a transition reads as what it does. */
export const effect = {
  send: (to: Address, message: unknown): Effect => ({ type: 'send', to, message }),
  sendParent: (message: unknown): Effect => ({ type: 'send', to: 'parent', message }),
  spawn: (id: string, logic: AnyActorLogic, options: { input?: unknown; supervision?: Supervision; systemId?: string } = {}): Effect =>
    ({ type: 'spawn', id, logic, ...options }),
  stop: (id?: string): Effect => id === undefined ? STOP_SELF : { type: 'stop', id },
  timer: (id: string, delay: number, message: unknown): Effect => ({ type: 'timer', id, delay, message }),
  cancelTimer: (id: string): Effect => ({ type: 'cancel-timer', id }),
  emit: (event: unknown): Effect => ({ type: 'emit', event }),
  emitMessage: (): Effect => EMIT_MESSAGE,
  done: (output?: unknown): Effect => ({ type: 'done', output }),
  fail: (error: unknown): Effect => ({ type: 'fail', error }),
} as const

const STOP_SELF: Effect = Object.freeze({ type: 'stop' })
const EMIT_MESSAGE: Effect = Object.freeze({ type: 'emit-message' })

/** Whether a status is final. */
export function isFinal(status: ActorStatus): boolean {
  return status !== 'active'
}
