import type { IncomingRequest } from '../../lib/connection.ts'
import { McpError, MethodNotFoundError } from '../../lib/jsonrpc/errors.ts'
import { gateIncomingRequest, type LifecycleState } from '../../lib/lifecycle.ts'
import { hasCapability, requiredCapability } from '../../lib/schema/capabilities.ts'
import { LEGACY_ONLY_METHODS, MODERN_ONLY_METHODS, hasModernMeta, readModernMeta } from '../../lib/schema/modern.ts'
import type { ServerCapabilities } from '../../lib/schema/types.ts'
import type { ServerCore } from './core.ts'

/** What a legacy session contributes to classifying its requests: where its lifecycle is, what it was offered. */
export interface LegacyGate {
  readonly status: LifecycleState
  /** What the session was offered at initialize. */
  readonly offered: ServerCapabilities
}

/**
 * Classifies a request once, at the edge, for a session or without one: its era, and in the
 * modern era what its `_meta` says (marked on the request, read by nothing else), or the refusal
 * it gets.
 *
 * - A request that carries its version in `_meta`, or asks for a method only the modern era has,
 *   is modern (MCP 2026-07-28), whatever its transport did before; so is every request to a
 *   server that speaks no legacy revision, which refuses `initialize` naming the versions it serves
 *   (legacy clients have no other diagnostic). A server configured without modern versions is a
 *   legacy server: those requests are unknown to it.
 * - Otherwise it is legacy: a session's lifecycle gates it (`session`; a request without a session,
 *   stateless HTTP, has no handshake to wait for), and a method whose capability was not offered
 *   does not exist for this client (-32601).
 */
export function classify(server: ServerCore, request: IncomingRequest, session: LegacyGate | undefined): McpError | undefined {
  const versions = server.versions
  const servesModern = versions.modern.length > 0
  if (servesModern && versions.legacy.length === 0) {
    if (request.method === 'initialize') {
      return new MethodNotFoundError(`Method not found: initialize (this server speaks only MCP ${versions.modern.join(', ')}, which has no initialize)`, { supported: [...versions.all] })
    }
    return gateModern(server, request)
  }
  if (servesModern && (hasModernMeta(request.params) || MODERN_ONLY_METHODS.has(request.method))) return gateModern(server, request)
  if (MODERN_ONLY_METHODS.has(request.method)) return new MethodNotFoundError(`Method not found: ${request.method}`)
  if (session !== undefined) {
    const refusal = gateIncomingRequest('server', session.status, request.method)
    if (refusal !== undefined) return refusal
  }
  const needed = requiredCapability(request.method)
  if (needed !== undefined && !hasCapability(session?.offered ?? server.capabilities(), needed)) {
    return new MethodNotFoundError(`Method not found: ${request.method} (capability ${needed.join('.')} not offered)`)
  }
  return undefined
}

/**
 * A modern-era request (MCP 2026-07-28): its `_meta` (-32602 without version or capabilities,
 * -32022 for a version the server does not serve, listing all it does), a method of this era
 * (-32601 for the legacy-only ones), a capability the server offers now (-32601 without). Marks
 * the request with what its `_meta` says.
 */
function gateModern(server: ServerCore, request: IncomingRequest): McpError | undefined {
  const versions = server.versions
  const meta = readModernMeta(request.params, versions.modern, versions.all)
  if (meta instanceof McpError) return meta
  if (LEGACY_ONLY_METHODS.has(request.method)) return new MethodNotFoundError(`Method not found: ${request.method} (not part of MCP ${meta.protocolVersion})`)
  const needed = requiredCapability(request.method)
  if (needed !== undefined && !hasCapability(server.capabilities(), needed)) {
    return new MethodNotFoundError(`Method not found: ${request.method} (capability ${needed.join('.')} not offered)`)
  }
  request.modernMeta = meta
  return undefined
}
