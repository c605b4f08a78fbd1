import { InvalidRequestError, type McpError } from './jsonrpc/errors.ts'

/**
 * The legacy-era session lifecycle (MCP 2024-11-05 … 2025-11-25), as a pure state machine.
 *
 * ```
 *                 initialize                 notifications/initialized
 *  awaiting-initialize ──────> initializing ───────────────────────────> operating
 *         │                        │                                        │
 *         └──────────── close ─────┴────────────── close ───────────────────┘
 *                                   v
 *                               closing ── closed ──> closed
 * ```
 *
 * On the server, `initialize` is the request arriving and `initialized` the notification arriving;
 * on the client, they are the request answered and the notification sent. Modern-era (stateless)
 * requests never pass through here: they carry their context in `_meta`.
 */
export type LifecycleState = 'awaiting-initialize' | 'initializing' | 'operating' | 'closing' | 'closed'

/** What moves the lifecycle. */
export type LifecycleEvent =
  | { type: 'initialize' }
  | { type: 'initialized' }
  | { type: 'close' }
  | { type: 'closed' }

/** Which side of the session the lifecycle belongs to. */
export type Role = 'server' | 'client'

/**
 * One step: the state after `event`. Events that do not apply leave the state as it is (a second
 * `initialized` notification, for instance, is ignored), so the function is total.
 */
export function stepLifecycle(state: LifecycleState, event: LifecycleEvent): LifecycleState {
  switch (event.type) {
    case 'initialize': return state === 'awaiting-initialize' ? 'initializing' : state
    case 'initialized': return state === 'initializing' ? 'operating' : state
    case 'close': return state === 'closed' ? state : 'closing'
    case 'closed': return 'closed'
  }
}

/**
 * Whether an incoming request may pass in `state`; returns the error to answer with, or undefined.
 *
 * - Server: before initialize only `initialize` and `ping` pass (MCP lifecycle: "the client SHOULD
 *   NOT send requests other than pings before the server has responded to the initialize
 *   request"); a second `initialize` is refused.
 * - Client: before the session operates, a server may send only `ping` (logging is a notification).
 */
export function gateIncomingRequest(role: Role, state: LifecycleState, method: string): McpError | undefined {
  if (method === 'ping') return undefined
  if (role === 'server') {
    if (method === 'initialize') {
      return state === 'awaiting-initialize' ? undefined : new InvalidRequestError('Invalid Request: the session is already initialized')
    }
    return state === 'awaiting-initialize' ? new InvalidRequestError('Invalid Request: the session is not initialized; send initialize first') : undefined
  }
  return state === 'operating' ? undefined : new InvalidRequestError('Invalid Request: the session is not initialized')
}

/**
 * Whether this side may send a request in `state`. Before the session operates only `ping` (and,
 * for the client, `initialize`) may go out; the server may also send logging notifications.
 */
export function canSendRequest(role: Role, state: LifecycleState, method: string): boolean {
  if (state === 'closing' || state === 'closed') return false
  if (method === 'ping') return true
  if (method === 'initialize') return role === 'client' && state === 'awaiting-initialize'
  // MCP lifecycle: the server SHOULD NOT send requests other than pings before `initialized`.
  return state === 'operating'
}
