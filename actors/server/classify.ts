import type { IncomingRequest } from '../../lib/connection.ts'
import { McpError, MethodNotFoundError } from '../../lib/jsonrpc/errors.ts'
import { hasCapability, requiredCapability } from '../../lib/schema/capabilities.ts'
import { LEGACY_ONLY_METHODS, readModernMeta } from '../../lib/schema/modern.ts'
import type { ServerCore } from './core.ts'

/**
 * Classifies a modern-era request (MCP 2026-07-28), once: its `_meta` (-32602 without version or
 * capabilities, -32022 for a version the server does not serve, listing all it does), a method of
 * this era (-32601 for the legacy-only ones), a capability the server offers now (-32601 without).
 * Marks the request with what its `_meta` says, so nothing reads it again; returns the refusal.
 */
export function gateModern(server: ServerCore, request: IncomingRequest): McpError | undefined {
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
