/**
 * The actor kernel, as actors/ and users meet it: logic as data (`lib/actor/logic.ts`), the
 * runtime (`lib/actor/system.ts`: spawn, parents and children, supervision, timers on a scheduler,
 * a registry, inspection) and `fromObservable`. The runtime lives in lib/ because the connection
 * (lib/) spawns each incoming request as an actor; it does no I/O, and time comes from the
 * system's scheduler.
 */
export { NONE, effect, isFinal } from '../lib/actor/logic.ts'
export type {
  ActorLogic, ActorSelf, ActorStatus, Address, AnyActorLogic, ChildMessage, Effect, MessageTarget, Snapshot, SpawnEffect, Step, Supervision,
} from '../lib/actor/logic.ts'
export { createActor, createActorSystem } from '../lib/actor/system.ts'
export type { ActorInspectionEvent, ActorRef, ActorSystem, ActorSystemOptions, SpawnOptions } from '../lib/actor/system.ts'
export { fromObservable } from '../lib/actor/from-observable.ts'
export { backoff, backoffDelay, canRetry, backoffTimer, retryWithBackoff, BACKOFF_DEFAULTS } from '../lib/operators/retry-policy.ts'
export type { Backoff, BackoffOptions } from '../lib/operators/retry-policy.ts'
