import { stepLifecycle } from '../../lib/lifecycle.ts'
import type { Implementation } from '../../lib/schema/types.ts'
import type { ClientMessage, ClientState } from './api.ts'

/** serverInfo of a modern server that does not identify itself (it SHOULD, in `_meta`). */
const ANONYMOUS: Implementation = Object.freeze({ name: '', version: '' })

/**
 * The client actor's behaviour: its lifecycle (the legacy handshake, or the modern era once
 * `server/discover` answered), the version spoken, the log level, the roots. `legacyAsked` is the
 * version a fresh handshake asks for again after a reconnect.
 */
export function stepClient(state: ClientState, message: ClientMessage, legacyAsked: string): ClientState {
  switch (message.type) {
    case 'initialize': return { ...state, status: stepLifecycle(state.status, message) }
    case 'initialized': return {
      ...state, era: 'legacy', status: stepLifecycle(state.status, message), protocolVersion: message.result.protocolVersion,
      serverInfo: message.result.serverInfo, serverCapabilities: message.result.capabilities ?? {}, instructions: message.result.instructions,
    }
    // The modern era has no session to initialize: the client operates once discover answered.
    case 'discovered': return {
      ...state, era: 'modern', status: 'operating', protocolVersion: message.version,
      serverInfo: message.description.serverInfo ?? state.serverInfo ?? ANONYMOUS,
      serverCapabilities: message.description.capabilities, instructions: message.description.instructions,
    }
    case 'version': return { ...state, protocolVersion: message.version }
    case 'logLevel': return { ...state, logLevel: message.level }
    case 'roots': return { ...state, roots: message.roots }
    // A fresh session: the handshake starts over (the era too: the server may have changed), the
    // version asked for is the first one again.
    case 'reconnecting': return { ...state, status: 'awaiting-initialize', era: undefined, protocolVersion: legacyAsked }
    case 'closed': return { ...state, status: stepLifecycle(state.status, message) }
  }
}
