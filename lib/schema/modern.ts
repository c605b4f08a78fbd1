/**
 * The modern era of MCP (revision 2026-07-28 onward), the parts client and server share: the
 * reserved `_meta` keys every request carries, the request metadata headers of Streamable HTTP
 * (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) with their value encoding, and the `x-mcp-header`
 * annotations of a tool's input schema. Pure functions, no I/O. Written from the official
 * specification (`docs/specification/2026-07-28/basic/index.mdx`, `basic/transports/streamable-http.mdx`).
 */
import type { JsonObject } from '../jsonrpc/message.ts'
import { isJsonObject } from '../jsonrpc/guards.ts'
import { base64, bytesOfBase64 } from '../base64url.ts'
import { InvalidParamsError, UnsupportedProtocolVersionError, type McpError } from '../jsonrpc/errors.ts'

/** Every modern-era revision supported, newest first. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const

/** The newest modern-era revision. */
export const LATEST_MODERN_VERSION = MODERN_PROTOCOL_VERSIONS[0]

/** True for a modern-era revision (per-request `_meta`, no initialize). Revisions are ISO dates. */
export function isModernVersion(version: unknown): version is string {
  return typeof version === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= '2026-07-28'
}

/** The reserved `_meta` keys of the modern era. */
export const MetaKey = {
  /** Request: the revision the request speaks (required). */
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  /** Request: the client's name and version (should be sent). */
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  /** Request: the client capabilities this request may rely on (required). */
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  /** Request: least severe level of `notifications/message` the request wants; none without it. */
  logLevel: 'io.modelcontextprotocol/logLevel',
  /** Notification and listen result: the id of the `subscriptions/listen` request it belongs to. */
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  /** Result: the server's name and version. */
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const

/** Methods that exist only in the legacy era: a modern request for one is -32601. */
export const LEGACY_ONLY_METHODS: ReadonlySet<string> = new Set([
  'initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe',
  'tasks/result', 'tasks/list',
])

/** Methods that exist only in the modern era: a legacy session asking for one gets -32601. */
export const MODERN_ONLY_METHODS: ReadonlySet<string> = new Set(['server/discover', 'subscriptions/listen', 'tasks/update'])

/** Requests whose result may be `input_required` (MRTR); any other request never gets one. */
export const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read'])

/** Results that carry `ttlMs` and `cacheScope` (CacheableResult). */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  'server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read',
])

/** The `_meta` of a request, read loosely: undefined when params or `_meta` is not an object. */
export function requestMeta(params: unknown): JsonObject | undefined {
  if (!isJsonObject(params)) return undefined
  const meta = params._meta
  return isJsonObject(meta) ? meta : undefined
}

/** True when a request says it is modern: its `_meta` names a protocol version. */
export function hasModernMeta(params: unknown): boolean {
  const meta = requestMeta(params)
  return meta !== undefined && MetaKey.protocolVersion in meta
}

/** What a modern request's `_meta` says, once checked. */
export interface ModernMeta {
  readonly protocolVersion: string
  readonly clientCapabilities: JsonObject
  readonly clientInfo: JsonObject | undefined
  readonly logLevel: string | undefined
}

/**
 * Checks the per-request fields of a modern request: `_meta` with a string protocolVersion and an
 * object clientCapabilities (else -32602, MCP 2026-07-28 basic), a version among `supported`
 * (else -32022 with `{ supported: advertised, requested }`: a dual-era server lists every version
 * it serves, legacy ones too). `clientInfo` is optional.
 */
export function readModernMeta(params: unknown, supported: readonly string[], advertised: readonly string[] = supported): ModernMeta | McpError {
  const meta = requestMeta(params)
  if (meta === undefined) return new InvalidParamsError('Invalid params: a request must carry _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities')
  const protocolVersion = meta[MetaKey.protocolVersion]
  if (typeof protocolVersion !== 'string' || protocolVersion.length === 0) return new InvalidParamsError(`Invalid params: _meta is missing ${MetaKey.protocolVersion}`)
  const clientCapabilities = meta[MetaKey.clientCapabilities]
  if (!isJsonObject(clientCapabilities)) return new InvalidParamsError(`Invalid params: _meta is missing ${MetaKey.clientCapabilities}`)
  if (!supported.includes(protocolVersion)) {
    return new UnsupportedProtocolVersionError(`Unsupported protocol version ${protocolVersion}; supported: ${advertised.join(', ')}`, { supported: [...advertised], requested: protocolVersion })
  }
  const clientInfo = meta[MetaKey.clientInfo]
  const logLevel = meta[MetaKey.logLevel]
  return { protocolVersion, clientCapabilities, clientInfo: isJsonObject(clientInfo) ? clientInfo : undefined, logLevel: typeof logLevel === 'string' ? logLevel : undefined }
}

// ---- HTTP request metadata headers ----

/**
 * The value of `Mcp-Name` for a request: `params.name` of tools/call and prompts/get, `params.uri`
 * of resources/read, `params.taskId` of the tasks extension's tasks/get, tasks/update and tasks/cancel.
 */
export function mcpNameOf(method: string, params: unknown): string | undefined {
  if (!isJsonObject(params)) return undefined
  const key = NAME_PARAM.get(method)
  const value = key === undefined ? undefined : params[key]
  return typeof value === 'string' ? value : undefined
}

/** The param each named method mirrors into `Mcp-Name`. */
const NAME_PARAM: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'name'], ['prompts/get', 'name'], ['resources/read', 'uri'], ['tasks/get', 'taskId'], ['tasks/update', 'taskId'], ['tasks/cancel', 'taskId'],
])

/** Methods whose POST must carry `Mcp-Name` (the tasks ones per the `io.modelcontextprotocol/tasks` extension). */
export const NAMED_METHODS: ReadonlySet<string> = new Set(NAME_PARAM.keys())

const BASE64_PREFIX = '=?base64?'
const BASE64_SUFFIX = '?='
/** Visible ASCII and space (the tab is allowed by RFC 9110 but kept to the encoded form here). */
const PLAIN_HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/

/**
 * A value as it goes into `Mcp-Name` or `Mcp-Param-{Name}`: strings as they are when plain visible
 * ASCII without edge spaces, integers in decimal, booleans as `true`/`false`; anything else (non-
 * ASCII, control characters, edge whitespace, empty, or text that looks like the sentinel) as
 * `=?base64?{UTF-8 in base64}?=`.
 */
export function encodeHeaderValue(value: string | number | boolean): string {
  const text = typeof value === 'string' ? value : String(value)
  if (PLAIN_HEADER_VALUE.test(text) && !(text.startsWith(BASE64_PREFIX) && text.endsWith(BASE64_SUFFIX))) return text
  return `${BASE64_PREFIX}${base64(new TextEncoder().encode(text))}${BASE64_SUFFIX}`
}

/**
 * A header value as the client meant it: the sentinel form decoded, a plain value as it is.
 * Undefined when it cannot be a value a client sent (characters outside visible ASCII and space,
 * or a sentinel whose base64 or UTF-8 is broken).
 */
export function decodeHeaderValue(header: string): string | undefined {
  if (header.startsWith(BASE64_PREFIX) && header.endsWith(BASE64_SUFFIX) && header.length >= BASE64_PREFIX.length + BASE64_SUFFIX.length) {
    const encoded = header.slice(BASE64_PREFIX.length, header.length - BASE64_SUFFIX.length)
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return undefined
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytesOfBase64(encoded))
    } catch {
      return undefined
    }
  }
  return /^[\x20-\x7e\t]*$/.test(header) ? header : undefined
}

// ---- x-mcp-header ----

/** One tool parameter mirrored into a header: `Mcp-Param-{name}`, read at `path` (a chain of `properties` keys). */
export interface HeaderParam {
  readonly name: string
  readonly path: readonly string[]
  readonly type: 'string' | 'integer' | 'boolean'
}

/** The header parameters of a tool, or why its definition is invalid. */
export type HeaderParams = { valid: true; params: HeaderParam[] } | { valid: false; reason: string }

/** RFC 9110 token characters (tchar). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const KEYWORDS_BELOW = ['items', 'prefixItems', 'additionalProperties', 'patternProperties', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else', '$defs', 'definitions', 'dependentSchemas', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems']

/**
 * Reads the `x-mcp-header` annotations of a tool's `inputSchema` and checks them against the
 * rules of Streamable HTTP: a non-empty token, unique without case, on a string, integer or
 * boolean property reachable from the root through `properties` only. An annotation anywhere else
 * (under items, a composition or condition keyword, `$defs`) makes the whole definition invalid.
 */
export function headerParamsOf(inputSchema: unknown): HeaderParams {
  const params: HeaderParam[] = []
  const seen = new Set<string>()
  let failure: string | undefined
  const visit = (schema: unknown, path: string[] | undefined, where: string): void => {
    if (failure !== undefined || !isJsonObject(schema)) return
    if ('x-mcp-header' in schema) {
      const name = schema['x-mcp-header']
      if (path === undefined || path.length === 0) { failure = `x-mcp-header at ${where} is not on a property reachable through properties`; return }
      if (typeof name !== 'string' || name.length === 0 || !TOKEN.test(name)) { failure = `x-mcp-header at ${where} must be a non-empty HTTP token, got ${JSON.stringify(name)}`; return }
      const key = name.toLowerCase()
      if (seen.has(key)) { failure = `x-mcp-header ${JSON.stringify(name)} is used twice`; return }
      seen.add(key)
      const type = schema.type
      if (type !== 'string' && type !== 'integer' && type !== 'boolean') { failure = `x-mcp-header ${JSON.stringify(name)} is on a property of type ${JSON.stringify(type)}; only string, integer and boolean may be mirrored`; return }
      params.push({ name, path, type })
    }
    if (isJsonObject(schema.properties)) {
      for (const [key, child] of Object.entries(schema.properties)) visit(child, path === undefined ? undefined : [...path, key], `${where}/properties/${key}`)
    }
    for (const keyword of KEYWORDS_BELOW) {
      const below = schema[keyword]
      if (Array.isArray(below)) below.forEach((child, i) => visit(child, undefined, `${where}/${keyword}/${i}`))
      else if (isJsonObject(below)) {
        if (keyword === '$defs' || keyword === 'definitions' || keyword === 'patternProperties' || keyword === 'dependentSchemas') {
          for (const [key, child] of Object.entries(below)) visit(child, undefined, `${where}/${keyword}/${key}`)
        } else visit(below, undefined, `${where}/${keyword}`)
      }
    }
  }
  visit(inputSchema, [], '#')
  return failure === undefined ? { valid: true, params } : { valid: false, reason: failure }
}

/** The value at a property path of the arguments, if it is one a header can carry (null and absent are none). */
export function headerArgumentOf(args: unknown, param: HeaderParam): string | number | boolean | undefined {
  let value: unknown = args
  for (const key of param.path) {
    if (!isJsonObject(value) || !Object.hasOwn(value, key)) return undefined
    value = value[key]
  }
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) ? value : undefined
}

/** The header name of a parameter, as sent: `Mcp-Param-{name}`. */
export function headerNameOf(param: HeaderParam): string {
  return `Mcp-Param-${param.name}`
}
