/**
 * The rules of Streamable HTTP 2026-07-28 (the modern era), pure: which POST is a modern-era one,
 * and what its headers must say about its body. Part of lib/http/rules.ts's request path.
 */
import { ErrorCode } from '../jsonrpc/errors.ts'
import { isJsonObject } from '../jsonrpc/guards.ts'
import { MODERN_ONLY_METHODS, MetaKey, NAMED_METHODS, decodeHeaderValue, hasModernMeta, isModernVersion, mcpNameOf, readModernMeta, requestMeta } from '../schema/modern.ts'
import { refusal, type HttpRefusal } from './refusal.ts'

/**
 * A POST of the modern era (MCP 2026-07-28): no session id, and a request that speaks a modern
 * version (in MCP-Protocol-Version or in its `_meta`) or asks for a method only that era has. An
 * initialize opens a legacy session, unless it says it is modern (then it is -32601, 404).
 */
export function isModernPost(sessionId: string | null, protocolVersion: string | null, payload: unknown): boolean {
  if (sessionId !== null || Array.isArray(payload) || !isJsonObject(payload)) return false
  if (payload.method === 'initialize') return hasModernMeta(payload.params)
  const header = protocolVersion?.trim()
  return (header !== undefined && isModernVersion(header)) || hasModernMeta(payload.params) || MODERN_ONLY_METHODS.has(payload.method as string)
}

/** What becomes of a modern-era POST that keeps the rules (see {@link checkModernPost}). */
export type ModernAction = { readonly type: 'serve-modern' } | { readonly type: 'modern-notification' }

const SERVE_MODERN: ModernAction = { type: 'serve-modern' }
/** Answered 202 with no body: this revision has no client notification to act on. */
const MODERN_NOTIFICATION: ModernAction = { type: 'modern-notification' }

const NOT_A_MESSAGE = 'Invalid Request: a POST carries a request or a notification'

/**
 * A modern-era POST (`message`, one JSON object) against the rules of Streamable HTTP 2026-07-28,
 * in their order: a notification is `modern-notification`; a request needs a method (-32600), the
 * `_meta` fields (-32602), MCP-Protocol-Version equal to its `_meta` version (-32020), a version
 * among `supported` (-32022, its `data` listing `advertised`), Mcp-Method equal to its method
 * (-32020) and, for tools/call, prompts/get and resources/read, Mcp-Name equal to the name it
 * names (-32020, the header decoded from its base64 form). Every refusal is 400 with the request's
 * id. The `Mcp-Param-*` headers are the server's to check: it knows the tools' schemas.
 */
export function checkModernPost(
  message: Readonly<Record<string, unknown>>, protocolVersion: string | null, mcpMethod: string | null, mcpName: string | null,
  supported: readonly string[], advertised: readonly string[],
): ModernAction | HttpRefusal {
  if (!('id' in message)) return MODERN_NOTIFICATION
  const id = message.id as string | number
  if (typeof message.method !== 'string') return refusal(400, ErrorCode.InvalidRequest, NOT_A_MESSAGE, id)
  const method = message.method
  const meta = readModernMeta(message.params, supported, advertised)
  if ('code' in meta && meta.code === ErrorCode.InvalidParams) return refusal(400, meta.code, meta.message, id)
  const requested = requestMeta(message.params)![MetaKey.protocolVersion] as string
  const header = protocolVersion?.trim()
  if (header !== requested) {
    return refusal(400, ErrorCode.HeaderMismatch, header === undefined ? 'Header mismatch: the MCP-Protocol-Version header is required'
      : `Header mismatch: MCP-Protocol-Version ${JSON.stringify(header)} does not match _meta ${JSON.stringify(requested)}`, id)
  }
  if ('code' in meta) {
    const error = meta.toJSON()
    return error.data === undefined ? refusal(400, error.code, error.message, id) : { type: 'refuse', status: 400, code: error.code, message: error.message, id, data: error.data }
  }
  const methodHeader = mcpMethod?.trim()
  if (methodHeader !== method) {
    return refusal(400, ErrorCode.HeaderMismatch, methodHeader === undefined ? 'Header mismatch: the Mcp-Method header is required'
      : `Header mismatch: Mcp-Method ${JSON.stringify(methodHeader)} does not match the body's method ${JSON.stringify(method)}`, id)
  }
  if (!NAMED_METHODS.has(method)) return SERVE_MODERN
  const raw = mcpName?.trim()
  const name = raw === undefined ? undefined : decodeHeaderValue(raw)
  const expected = mcpNameOf(method, message.params)
  if (name !== undefined && name === expected) return SERVE_MODERN
  return refusal(400, ErrorCode.HeaderMismatch, raw === undefined ? `Header mismatch: the Mcp-Name header is required for ${method}`
    : name === undefined ? 'Header mismatch: Mcp-Name is not a valid header value'
    : `Header mismatch: Mcp-Name ${JSON.stringify(name)} does not match the body's ${JSON.stringify(expected)}`, id)
}
