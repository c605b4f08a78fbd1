import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { CapabilityError, ProtocolError } from '../../lib/jsonrpc/errors.ts'
import { canSendRequest } from '../../lib/lifecycle.ts'
import { hasCapability, requiredCapability } from '../../lib/schema/capabilities.ts'
import { LEGACY_ONLY_METHODS, MODERN_ONLY_METHODS } from '../../lib/schema/modern.ts'
import type { ClientState } from './api.ts'

/**
 * Why the client may not send `method` now, by its state (the client actor's latest snapshot); undefined
 * when it may: a method of the other era, a request the legacy lifecycle does not allow yet (or
 * any more), or one needing a capability the server did not declare.
 */
export function gateOutgoing(state: ClientState, method: string, params: JsonObject | undefined): Error | undefined {
  if (state.era === 'modern') {
    if (LEGACY_ONLY_METHODS.has(method)) return new ProtocolError(`${method} does not exist in MCP ${state.protocolVersion} (the modern era); the server speaks no legacy session`)
  } else if (MODERN_ONLY_METHODS.has(method)) {
    // The probe of the handshake is the one modern request a session that is not modern yet sends.
    if (method !== 'server/discover' || state.status !== 'awaiting-initialize') return new ProtocolError(`${method} exists only in the modern era; this session speaks MCP ${state.protocolVersion}`)
    return undefined
  } else if (!canSendRequest('client', state.status, method)) {
    return new ProtocolError(`Cannot send ${method} while the session is ${state.status}`)
  }
  const needed = requiredCapability(method, params)
  if (needed !== undefined && !hasCapability(state.serverCapabilities, needed)) {
    return new CapabilityError(`The server did not declare the ${needed.join('.')} capability, which ${method} needs`)
  }
  return undefined
}
