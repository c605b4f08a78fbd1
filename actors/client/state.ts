import { NONE, effect, type ActorLogic, type Effect, type Step } from '../actor.ts'
import { stepLifecycle } from '../../lib/lifecycle.ts'
import type { Implementation } from '../../lib/schema/types.ts'
import type { ClientMessage, ClientState } from './api.ts'

/** serverInfo of a modern server that does not identify itself (it SHOULD, in `_meta`). */
const ANONYMOUS: Implementation = Object.freeze({ name: '', version: '' })

/** What the client actor asks its owner to do (its `emit` effects). */
export type ClientEvent =
  /** The roots changed while a legacy session operates: tell the server (`notifications/roots/list_changed`). */
  { readonly type: 'roots-changed' }

const ROOTS_CHANGED: readonly Effect[] = Object.freeze([effect.emit({ type: 'roots-changed' } satisfies ClientEvent)])
const DONE: readonly Effect[] = Object.freeze([effect.done()])

/**
 * The client actor's logic: its lifecycle (the legacy handshake, or the modern era once
 * `server/discover` answered), the version spoken, the log level, the roots. Pure; its input is
 * the state it starts in, and `legacyAsked` the version a fresh handshake asks for again after a
 * reconnect.
 *
 * ```
 *   awaiting-initialize --initialize--> initializing --initialized--> operating (legacy)
 *          '------------------------discovered------------------------> operating (modern)
 *   any --reconnecting--> awaiting-initialize (era unknown again)        any --closed--> closed (done)
 * ```
 */
export function clientLogic(legacyAsked: string): ActorLogic<ClientState, ClientMessage, ClientState> {
  return {
    name: 'client',
    initial: state => state,
    transition: (state, message): Step<ClientState> => {
      switch (message.type) {
        case 'initialize': return [{ ...state, status: stepLifecycle(state.status, message) }, NONE]
        case 'initialized': return [{
          ...state, era: 'legacy', status: stepLifecycle(state.status, message), protocolVersion: message.result.protocolVersion,
          serverInfo: message.result.serverInfo, serverCapabilities: message.result.capabilities ?? {}, instructions: message.result.instructions,
        }, NONE]
        // The modern era has no session to initialize: the client operates once discover answered.
        case 'discovered': return [{
          ...state, era: 'modern', status: 'operating', protocolVersion: message.version,
          serverInfo: message.description.serverInfo ?? state.serverInfo ?? ANONYMOUS,
          serverCapabilities: message.description.capabilities, instructions: message.description.instructions,
        }, NONE]
        case 'version': return [{ ...state, protocolVersion: message.version }, NONE]
        case 'logLevel': return [{ ...state, logLevel: message.level }, NONE]
        // MCP 2026-07-28 removed notifications/roots/list_changed: a modern server asks for roots in each request that needs them.
        case 'roots': return [{ ...state, roots: message.roots }, state.status === 'operating' && state.era === 'legacy' ? ROOTS_CHANGED : NONE]
        // A fresh session: the handshake starts over (the era too: the server may have changed), the
        // version asked for is the first one again.
        case 'reconnecting': return [{ ...state, status: 'awaiting-initialize', era: undefined, protocolVersion: legacyAsked }, NONE]
        case 'closed': return [{ ...state, status: stepLifecycle(state.status, message) }, DONE]
      }
    },
  }
}

/**
 * The client's state as the client's parts reach it (handshake, requests, handlers): the state of
 * the client actor's latest snapshot, which the client keeps from its own subscription, and the
 * actor's mailbox. Nobody reads the actor itself.
 */
export interface ClientStateSource {
  /** The state of the latest snapshot. */
  readonly current: ClientState
  /** Sends the client actor a message; its transition makes the next snapshot. */
  send(message: ClientMessage): void
}
