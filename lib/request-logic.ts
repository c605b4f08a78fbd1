import { NONE, effect, type ActorLogic, type Effect, type Step } from './actor/logic.ts'
import type { JsonObject } from './jsonrpc/message.ts'

/**
 * One incoming request as an actor: its life (progress reported, its outcome, a cancellation, the
 * connection closing) comes to it as messages, and what follows goes out as events its owner (the
 * connection, or a sessionless request's reply) turns into I/O. Nothing here writes a byte.
 *
 * ```
 *              progress (passed on)
 *               ┌─────┐
 *               v     │      result | error (passed on, done)
 *   running ──────────┴─────────────────────────────────────> answered
 *      │  cancel, unless initialize (passed on, done)
 *      ├────────────────────────────────────────────────────> cancelled
 *      │  closed (passed on, done)
 *      └────────────────────────────────────────────────────> closed
 * ```
 *
 * The request ends `done` whatever its outcome: a handler that fails is answered with an error,
 * it does not fail the actor, so it never troubles its parent (the session). Once it ended,
 * whatever comes later (a late result, a second cancel) is a dead letter: answered once, at most.
 */

/** Where a request is. */
export type RequestPhase = 'running' | 'answered' | 'cancelled' | 'closed'

/** A request actor's state: its phase, and whether a cancellation may end it. */
export interface RequestState {
  readonly phase: RequestPhase
  /** False for `initialize`, which MCP says cannot be cancelled (the connection closing still ends it). */
  readonly isCancellable: boolean
}

/** What a request actor hears. */
export type RequestMessage =
  /** The handler reported progress (already checked against the token's sequence): these params go out. */
  | { readonly type: 'progress'; readonly params: JsonObject }
  /** The handler's outcome: its value. */
  | { readonly type: 'result'; readonly result: unknown }
  /** The handler's outcome: it threw, rejected or errored. */
  | { readonly type: 'error'; readonly error: unknown }
  /** The requester cancelled (`notifications/cancelled`); `reason` is what the handler's signal aborts with. */
  | { readonly type: 'cancel'; readonly reason?: unknown }
  /** The connection closed with the request unanswered. */
  | { readonly type: 'closed'; readonly error: unknown }

/**
 * What a request actor asks its owner to do, as the message that decided it: send progress, answer
 * with a result or an error, or stop the handler without answering (`cancel`: its signal aborts
 * with `reason`, or a CancelledError; `closed`: with `error`).
 */
export type RequestActorEvent = RequestMessage

/**
 * What a request actor is spawned with: its method, and what stops its handler when the actor
 * ends however it ends (stopped with its parent included). The owner's record of the request
 * (lib/incoming-request.ts) is one.
 */
export interface RequestInput {
  readonly method: string
  /** Called once the actor ended; stops the handler if it was neither answered nor aborted. */
  unsubscribe(): void
}

const RUNNING: RequestState = Object.freeze({ phase: 'running', isCancellable: true })
const RUNNING_INITIALIZE: RequestState = Object.freeze({ phase: 'running', isCancellable: false })
const ANSWERED: RequestState = Object.freeze({ phase: 'answered', isCancellable: false })
const CANCELLED: RequestState = Object.freeze({ phase: 'cancelled', isCancellable: false })
const CLOSED: RequestState = Object.freeze({ phase: 'closed', isCancellable: false })
const DONE: Effect = Object.freeze({ type: 'done' })
// Every step is made once: the message itself is what goes to the owner (`emit-message`), so a
// request's transitions allocate nothing on the per-message path.
const PASS_ON: readonly Effect[] = Object.freeze([effect.emitMessage()])
const PASS_ON_AND_END: readonly Effect[] = Object.freeze([effect.emitMessage(), DONE])
const STEPS = {
  progress: Object.freeze([RUNNING, PASS_ON]) as Step<RequestState>,
  answered: Object.freeze([ANSWERED, PASS_ON_AND_END]) as Step<RequestState>,
  cancelled: Object.freeze([CANCELLED, PASS_ON_AND_END]) as Step<RequestState>,
  closed: Object.freeze([CLOSED, PASS_ON_AND_END]) as Step<RequestState>,
}

/** The logic of one incoming request (see the diagram above). */
export const requestLogic: ActorLogic<RequestState, RequestMessage, RequestInput> = {
  name: 'request',
  // MCP lifecycle: the initialize request MUST NOT be cancelled.
  initial: input => input.method === 'initialize' ? RUNNING_INITIALIZE : RUNNING,
  transition: (state, message): Step<RequestState> => {
    if (state.phase !== 'running') return [state, NONE]
    switch (message.type) {
      case 'progress': return state === RUNNING ? STEPS.progress : [state, PASS_ON]
      case 'result':
      case 'error': return STEPS.answered
      case 'cancel':
        // MCP cancellation: no response for a cancelled request; its handler stops.
        if (!state.isCancellable) return [state, NONE]
        return STEPS.cancelled
      case 'closed': return STEPS.closed
      default: return [state, NONE]
    }
  },
  // The handler is the source outside this actor: it stops when the actor ends.
  start: input => input,
}
