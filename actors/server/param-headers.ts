import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { RequestInfo } from '../../lib/transport.ts'
import { HeaderMismatchError } from '../../lib/jsonrpc/errors.ts'
import { decodeHeaderValue, headerArgumentOf, headerParamsOf, type HeaderParam } from '../../lib/schema/modern.ts'
import type { ToolEntry } from './registry.ts'

/**
 * A tool call's `Mcp-Param-*` headers against its arguments (Streamable HTTP 2026-07-28): each
 * argument the tool mirrors must come with its header, decoded equal (integers compared as
 * numbers); a header without its argument, or one that cannot be decoded, is refused too.
 */
export function checkParamHeaders(entry: ToolEntry, info: RequestInfo, params: JsonObject | undefined): HeaderMismatchError | undefined {
  // Only a Streamable HTTP POST has headers of its own (a WebSocket's are its upgrade's).
  if (info.transport !== 'streamable-http') return undefined
  const mirrored = entry.headerParams ??= headerParamsFor(entry.wire.inputSchema)
  if (mirrored.length === 0) return undefined
  const headers = info.headers
  if (headers === undefined) return undefined
  const args = params?.arguments
  for (const param of mirrored) {
    const name = `Mcp-Param-${param.name}`
    const raw = headers.get(name)
    const value = headerArgumentOf(args, param)
    if (value === undefined) {
      if (raw !== null) return new HeaderMismatchError(`Header mismatch: ${name} is sent but the argument it mirrors is not`)
      continue
    }
    if (raw === null) return new HeaderMismatchError(`Header mismatch: ${name} is required when the argument it mirrors is given`)
    const decoded = decodeHeaderValue(raw.trim())
    if (decoded === undefined) return new HeaderMismatchError(`Header mismatch: ${name} is not a valid header value`)
    const isEqual = typeof value === 'number' ? decoded.trim() !== '' && Number(decoded) === value : decoded === String(value)
    if (!isEqual) return new HeaderMismatchError(`Header mismatch: ${name} ${JSON.stringify(decoded)} does not match the argument ${JSON.stringify(value)}`)
  }
  return undefined
}

function headerParamsFor(inputSchema: unknown): HeaderParam[] {
  const read = headerParamsOf(inputSchema)
  return read.valid ? read.params : []
}
