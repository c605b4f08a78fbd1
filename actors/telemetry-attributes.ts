/**
 * The attributes telemetry records of a request (actors/telemetry.ts), by the semantic conventions
 * for MCP: what names a span, what its attributes are, which of them metrics keep, and the
 * `error.type` of an outcome. Pure functions of the request.
 */
import type { Attributes } from '@opentelemetry/api'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import { CancelledError, ConnectionClosedError, ErrorCode, McpError, TimeoutError, TransportError } from '../lib/jsonrpc/errors.ts'

/** Methods whose target (a tool's or prompt's name) is part of the span name. */
const NAMED_TARGETS: Readonly<Record<string, 'tool' | 'prompt'>> = { 'tools/call': 'tool', 'prompts/get': 'prompt' }
/** Methods that name a resource URI (recorded on spans, not in span names: they are high-cardinality). */
const URI_METHODS: ReadonlySet<string> = new Set(['resources/read', 'resources/subscribe', 'resources/unsubscribe', 'notifications/resources/updated'])

/** `{mcp.method.name} {target}`, the target a tool's or prompt's name where the method has one. */
export function spanName(method: string, params: JsonObject | undefined): string {
  const target = NAMED_TARGETS[method] === undefined ? undefined : params?.name
  return typeof target === 'string' ? `${method} ${target}` : method
}

/** The attributes of a request both sides record (span and metrics alike, but for the ids). */
export function requestAttributes(method: string, params: JsonObject | undefined, transportKind: string | undefined, version: string | undefined): Attributes {
  const attributes: Attributes = Object.assign({ 'mcp.method.name': method }, transportAttributes(transportKind))
  if (version !== undefined) attributes['mcp.protocol.version'] = version
  const target = NAMED_TARGETS[method]
  const name = params?.name
  if (target === 'tool' && typeof name === 'string') {
    attributes['gen_ai.tool.name'] = name
    attributes['gen_ai.operation.name'] = 'execute_tool'
  } else if (target === 'prompt' && typeof name === 'string') {
    attributes['gen_ai.prompt.name'] = name
  }
  if (URI_METHODS.has(method) && typeof params?.uri === 'string') attributes['mcp.resource.uri'] = params.uri
  return attributes
}

const METRIC_KEYS = ['mcp.method.name', 'mcp.protocol.version', 'gen_ai.tool.name', 'gen_ai.prompt.name', 'gen_ai.operation.name', 'network.transport', 'network.protocol.name', 'server.address', 'server.port']

/** The attributes kept on metrics: the request's, without the high-cardinality ones (URIs, ids, addresses). */
export function metricAttributes(attributes: Attributes): Attributes {
  const kept: Attributes = {}
  for (const key of METRIC_KEYS) {
    if (attributes[key] !== undefined) kept[key] = attributes[key]
  }
  return kept
}

/**
 * The network attributes of a transport by its kind: stdio is a pipe; HTTP (either) and WebSocket
 * run on TCP; a transport of another kind (memory, your own) records none.
 */
export function transportAttributes(kind: string | undefined): Readonly<Attributes> {
  switch (kind) {
    case 'stdio': return PIPE
    // 'http': the client's Streamable HTTP and HTTP+SSE transports.
    case 'streamable-http': case 'sse': case 'http': return HTTP
    case 'websocket': return WEBSOCKET
    default: return NO_NETWORK
  }
}

// Made once: a request copies the ones of its transport.
const PIPE: Readonly<Attributes> = Object.freeze({ 'network.transport': 'pipe' })
const HTTP: Readonly<Attributes> = Object.freeze({ 'network.transport': 'tcp', 'network.protocol.name': 'http' })
const WEBSOCKET: Readonly<Attributes> = Object.freeze({ 'network.transport': 'tcp', 'network.protocol.name': 'websocket' })
const NO_NETWORK: Readonly<Attributes> = Object.freeze({})

/** `server.address` and `server.port` of a server's URL (the scheme's default port when it names none); none without a URL. */
export function serverAttributes(url: string | undefined): Attributes | undefined {
  if (url === undefined) return undefined
  let parsed: URL
  try { parsed = new URL(url) } catch { return undefined }
  const port = parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? 443 : 80
  return { 'server.address': parsed.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': port }
}

/**
 * `error.type` of an error: the JSON-RPC code of an answered error, `timeout`, `cancelled`,
 * `connection_closed`, `transport_error`, or `_OTHER`.
 */
export function errorType(error: unknown): string {
  if (error instanceof McpError) return String(error.code)
  if (error instanceof TimeoutError) return 'timeout'
  if (error instanceof CancelledError) return 'cancelled'
  if (error instanceof ConnectionClosedError) return 'connection_closed'
  if (error instanceof TransportError) return 'transport_error'
  return '_OTHER'
}

/** The message of an error, for a span's status. */
export function errorMessage(error: unknown): string | undefined {
  return error instanceof Error ? error.message : undefined
}

/**
 * Keeps what a peer names freely out of a refused request's metric attributes (the span keeps
 * them): an unknown method is `_OTHER`, and an unknown tool or prompt (-32602 for a tools/call or
 * prompts/get) is not named, so made-up names cannot grow the metrics' attribute sets.
 */
export function boundCardinality(attributes: Attributes, code: number): void {
  if (code === ErrorCode.MethodNotFound) attributes['mcp.method.name'] = '_OTHER'
  if (code === ErrorCode.InvalidParams) {
    delete attributes['gen_ai.tool.name']
    delete attributes['gen_ai.prompt.name']
  }
}
