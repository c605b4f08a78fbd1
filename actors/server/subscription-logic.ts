import { NONE, type ActorLogic, type Step } from '../../lib/actor/logic.ts'
import type { SubscriptionMessage, SubscriptionState } from './api.ts'

/** What a subscription actor tells its session: its resource changed, so `notifications/resources/updated` goes out. */
export interface SubscriptionUpdated { readonly type: 'subscription.updated'; readonly uri: string }

/**
 * One resources/subscribe of a legacy session, as an actor: a child of the session's actor,
 * spawned with the URI by the subscribe and stopped by the unsubscribe (or with the session). Each
 * update it hears is counted and passed to its parent, which sends the notification.
 */
export const subscriptionLogic: ActorLogic<SubscriptionState, SubscriptionMessage, string> = {
  name: 'subscription',
  initial: uri => ({ uri, updates: 0 }),
  transition: (state, message): Step<SubscriptionState> => message.type === 'updated'
    ? [{ uri: state.uri, updates: state.updates + 1 }, [{ type: 'send', to: 'parent', message: { type: 'subscription.updated', uri: state.uri } satisfies SubscriptionUpdated }]]
    : [state, NONE],
}

/** The name of the subscription to `uri` among its session's children. */
export function subscriptionId(uri: string): string {
  return `subscription:${uri}`
}
