import { NONE, effect, type ActorLogic, type ChildMessage, type Effect, type Step } from '../../lib/actor/logic.ts'
import { stepLifecycle, type LifecycleState } from '../../lib/lifecycle.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { ClientCapabilities, Implementation, LoggingLevel } from '../../lib/schema/types.ts'
import type { SessionState } from './api.ts'
import { subscriptionId, subscriptionLogic, type SubscriptionUpdated } from './subscription-logic.ts'

/**
 * A legacy session as an actor's logic: its lifecycle (lib/lifecycle.ts), the version and client
 * negotiated at initialize, its log level and its resource subscriptions, each a child actor
 * (actors/server/subscription-logic.ts). Its in-flight requests are its children too (the
 * connection spawns them under it, lib/request-logic.ts); it hears of their end and lets it be.
 *
 * ```
 *   initialize ─> initializing ─ initialized ─> operating ─ closed ─> closed (stops itself, and so its children)
 *   subscribe uri    -> spawn subscription:<uri>        unsubscribe uri -> stop subscription:<uri>
 *   resource-updated -> send `updated` to the child      subscription.updated (from it) -> emit notify
 * ```
 *
 * One deliberate exception to copying: `subscriptions` is changed in place (the state object is
 * new), since copying it per change made n subscribes cost O(n²). A session starts with one empty
 * set shared by all (never changed): its own is made with its first subscription, so an idle
 * session holds none.
 */

/** The part of a session's state another instance saved (a shared session), as the session reads it back. */
export interface SavedSession {
  readonly status: LifecycleState
  readonly protocolVersion: string
  readonly clientCapabilities: ClientCapabilities
  readonly clientInfo?: Implementation
  readonly logLevel: LoggingLevel
  readonly subscriptions: readonly string[]
}

/** What a session actor hears. */
export type SessionMessage =
  | { readonly type: 'initialize'; readonly protocolVersion: string; readonly clientInfo?: Implementation; readonly clientCapabilities: ClientCapabilities }
  | { readonly type: 'initialized' }
  | { readonly type: 'set-level'; readonly level: LoggingLevel }
  | { readonly type: 'subscribe'; readonly uri: string }
  | { readonly type: 'unsubscribe'; readonly uri: string }
  /** The server heard that `uri` changed (its event bus). */
  | { readonly type: 'resource-updated'; readonly uri: string }
  /** What another instance saved of this session (a shared session's first message brought it). */
  | { readonly type: 'restore'; readonly saved: SavedSession }
  /** The connection closed. */
  | { readonly type: 'closed' }
  | SubscriptionUpdated
  | ChildMessage

/** What a session actor asks its owner to do: send a notification to the client. */
export type SessionEvent = { readonly type: 'notify'; readonly method: string; readonly params: JsonObject }

/** What a session actor starts from: the version it assumes until initialize, its default log level. */
export interface SessionInput {
  readonly protocolVersion: string
  readonly logLevel: LoggingLevel
}

const UPDATED = Object.freeze({ type: 'updated' })
/** Every session's subscriptions until its first (see above); never changed. */
const NO_SUBSCRIPTIONS: ReadonlySet<string> = new Set()

/** The session's own set of subscriptions, to change in place: made on the first. */
function ownSubscriptions(state: SessionState): Set<string> {
  return state.subscriptions === NO_SUBSCRIPTIONS ? new Set() : state.subscriptions as Set<string>
}
const STOP_SELF: readonly Effect[] = Object.freeze([effect.stop()])

/** The logic of a legacy session (see the diagram above). */
export const sessionLogic: ActorLogic<SessionState, SessionMessage, SessionInput> = {
  name: 'session',
  initial: input => ({
    status: 'awaiting-initialize', protocolVersion: input.protocolVersion, clientCapabilities: {}, logLevel: input.logLevel, subscriptions: NO_SUBSCRIPTIONS,
  }),
  transition: (state, message): Step<SessionState> => {
    switch (message.type) {
      case 'initialize': {
        const status = stepLifecycle(state.status, message)
        if (status === state.status) return [state, NONE]
        return [{ ...state, status, protocolVersion: message.protocolVersion, clientInfo: message.clientInfo, clientCapabilities: message.clientCapabilities }, NONE]
      }
      case 'initialized': return lifecycle(state, stepLifecycle(state.status, message))
      case 'set-level': return state.logLevel === message.level ? [state, NONE] : [{ ...state, logLevel: message.level }, NONE]
      case 'subscribe': {
        if (state.subscriptions.has(message.uri)) return [state, NONE]
        const subscriptions = ownSubscriptions(state)
        subscriptions.add(message.uri)
        return [{ ...state, subscriptions }, [effect.spawn(subscriptionId(message.uri), subscriptionLogic, { input: message.uri })]]
      }
      case 'unsubscribe': {
        if (!(state.subscriptions as Set<string>).delete(message.uri)) return [state, NONE]
        return [{ ...state }, [effect.stop(subscriptionId(message.uri))]]
      }
      case 'resource-updated':
        return state.subscriptions.has(message.uri) ? [state, [effect.send({ child: subscriptionId(message.uri) }, UPDATED)]] : [state, NONE]
      case 'subscription.updated':
        if (!state.subscriptions.has(message.uri)) return [state, NONE]
        return [state, [effect.emit({ type: 'notify', method: 'notifications/resources/updated', params: { uri: message.uri } } satisfies SessionEvent)]]
      case 'restore': return restore(state, message.saved)
      case 'closed': return [{ ...state, status: stepLifecycle(state.status, message) }, STOP_SELF]
      // Its requests end on their own (answered, cancelled, closed): nothing to do.
      default: return [state, NONE]
    }
  },
}

function lifecycle(state: SessionState, status: LifecycleState): Step<SessionState> {
  return status === state.status ? [state, NONE] : [{ ...state, status }, NONE]
}

/** A shared session goes on from what was saved: its negotiated state, and a subscription actor per saved URI. */
function restore(state: SessionState, saved: SavedSession): Step<SessionState> {
  const subscriptions = ownSubscriptions(state)
  const spawns: Effect[] = []
  for (const uri of saved.subscriptions) {
    if (subscriptions.has(uri)) continue
    subscriptions.add(uri)
    spawns.push(effect.spawn(subscriptionId(uri), subscriptionLogic, { input: uri }))
  }
  const { subscriptions: _saved, ...negotiated } = saved
  return [{ ...state, ...negotiated, subscriptions }, spawns]
}
