/**
 * The pure parts of the client's modern era (MCP 2026-07-28): the `_meta` every request carries,
 * how a result is read (`resultType`), how a retry of a multi-round-trip request is built, how a
 * version is chosen, and which errors identify a modern server. No I/O; the client wires them.
 */
import type { JsonObject, Meta } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, McpError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { INPUT_REQUIRED_METHODS, MetaKey } from '../../lib/schema/modern.ts'
import type { ClientCapabilities, Implementation, LoggingLevel, ServerCapabilities } from '../../lib/schema/types.ts'
import { InvalidResultError } from './errors.ts'

/** What a modern request declares about the client, stamped into its `_meta`. */
export interface ModernIdentity {
  version: string
  capabilities: ClientCapabilities
  info: Implementation
  /** Least severe log level wanted (`io.modelcontextprotocol/logLevel`); none when undefined. */
  logLevel?: LoggingLevel
}

/**
 * The params of a modern request: the caller's params with the per-request protocol fields in
 * `_meta` (MCP 2026-07-28 basic: protocolVersion and clientCapabilities are required, clientInfo
 * should be sent). The caller's own `_meta` keys stay (a progress token, trace context); a
 * caller's clientCapabilities or clientInfo wins over the declared ones (a request may narrow
 * them), the protocol version never does, since HTTP mirrors it into a header.
 */
export function stampModernMeta(params: JsonObject | undefined, identity: ModernIdentity): JsonObject {
  const own = isJsonObject(params?._meta) ? params!._meta as Meta : undefined
  // Literal keys and Object.assign rather than spreads with computed keys: every modern request
  // passes here. The caller's own keys win, except the version, which is the client's to say.
  const meta: Meta = {
    'io.modelcontextprotocol/clientCapabilities': identity.capabilities as unknown as JsonObject,
    'io.modelcontextprotocol/clientInfo': identity.info as unknown as JsonObject,
  }
  if (identity.logLevel !== undefined) meta['io.modelcontextprotocol/logLevel'] = identity.logLevel
  if (own !== undefined) Object.assign(meta, own)
  meta['io.modelcontextprotocol/protocolVersion'] = identity.version
  const stamped: JsonObject = Object.assign({}, params)
  stamped._meta = meta
  return stamped
}

/** One input request of an `input_required` result, checked: a known method and object params. */
export interface InputRequest {
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list'
  params: JsonObject | undefined
}

/** How a result reads under MCP 2026-07-28. */
export type ResultOutcome =
  | { kind: 'complete' }
  | { kind: 'input_required'; inputRequests: Map<string, InputRequest> | undefined; requestState: string | undefined }
  | { kind: 'invalid'; error: InvalidResultError }

const INPUT_METHODS: ReadonlySet<string> = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list'])

/**
 * Reads a result's `resultType` (MCP 2026-07-28 basic): absent means `complete` (a server of an
 * earlier revision); `input_required` only on tools/call, prompts/get and resources/read, with
 * `inputRequests` (a map of elicitation, sampling or roots requests) and/or a string
 * `requestState`; anything else is invalid. Never throws, whatever the server sent.
 */
export function readResult(method: string, result: unknown): ResultOutcome {
  if (!isJsonObject(result)) return invalid(method, 'the result is not an object')
  const type = result.resultType
  if (type === undefined || type === 'complete') return { kind: 'complete' }
  // The tasks extension: a tools/call may be answered with a task (CreateTaskResult), a final answer for the rounds.
  if (type === 'task' && method === 'tools/call') return { kind: 'complete' }
  if (type !== 'input_required') return invalid(method, `unknown resultType ${JSON.stringify(type)}`)
  if (!INPUT_REQUIRED_METHODS.has(method)) return invalid(method, 'input_required is only allowed on tools/call, prompts/get and resources/read')
  const state = result.requestState
  if (state !== undefined && typeof state !== 'string') return invalid(method, 'requestState is not a string')
  const raw = result.inputRequests
  if (raw === undefined) {
    // MCP MRTR: at least one of inputRequests and requestState; without either, a retry is the same request again.
    if (state === undefined) return invalid(method, 'input_required carries neither inputRequests nor requestState')
    return { kind: 'input_required', inputRequests: undefined, requestState: state }
  }
  if (!isJsonObject(raw)) return invalid(method, 'inputRequests is not an object')
  const requests = new Map<string, InputRequest>()
  for (const [key, entry] of Object.entries(raw)) {
    if (!isJsonObject(entry) || typeof entry.method !== 'string') return invalid(method, `input request ${JSON.stringify(key)} is not a request object`)
    if (!INPUT_METHODS.has(entry.method)) return invalid(method, `input request ${JSON.stringify(key)} asks for ${JSON.stringify(entry.method)}, which is not elicitation/create, sampling/createMessage or roots/list`)
    if (entry.params !== undefined && !isJsonObject(entry.params)) return invalid(method, `input request ${JSON.stringify(key)} has params that are not an object`)
    requests.set(key, { method: entry.method as InputRequest['method'], params: entry.params as JsonObject | undefined })
  }
  if (requests.size === 0 && state === undefined) return invalid(method, 'input_required carries neither inputRequests nor requestState')
  return { kind: 'input_required', inputRequests: requests, requestState: state }
}

function invalid(method: string, reason: string): ResultOutcome {
  return { kind: 'invalid', error: new InvalidResultError(method, reason) }
}

/**
 * The params of the retry of a multi-round-trip request (MCP MRTR): the original params with
 * `inputResponses` (when there were input requests) and `requestState` echoed exactly, or left
 * out when the server sent none. Answers of an earlier round never carry over.
 */
export function retryParams(original: JsonObject | undefined, responses: JsonObject | undefined, requestState: string | undefined): JsonObject {
  const { inputResponses: _responses, requestState: _state, ...rest } = original ?? {}
  const params: JsonObject = { ...rest }
  if (responses !== undefined) params.inputResponses = responses
  if (requestState !== undefined) params.requestState = requestState
  return params
}

/**
 * A complete result as callers get it: without the modern envelope, so a result reads the same in
 * both eras. `resultType` goes (it is `complete` once the input rounds are over) and so does
 * `_meta['io.modelcontextprotocol/serverInfo']` (the client's `serverInfo` holds the identity);
 * a `_meta` left empty goes too. Every other field stays (`ttlMs`, `cacheScope`, other `_meta` keys).
 */
export function withoutEnvelope(result: JsonObject): JsonObject {
  if (!('resultType' in result) && !(isJsonObject(result._meta) && MetaKey.serverInfo in result._meta)) return result
  // A task stays marked as one (the tasks extension): only its resultType tells it from a result.
  const { resultType, _meta, ...fields } = result
  const rest: JsonObject = resultType === 'task' ? { resultType, ...fields } : fields
  if (!isJsonObject(_meta)) return _meta === undefined ? rest : { ...rest, _meta }
  const { [MetaKey.serverInfo]: _info, ...meta } = _meta
  return Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta }
}

/** The newest of `ours` that `theirs` lists too, or undefined. `ours` is newest first. */
export function chooseVersion(theirs: unknown, ours: readonly string[]): string | undefined {
  if (!Array.isArray(theirs)) return undefined
  return ours.find(version => theirs.includes(version))
}

/**
 * Errors only a modern server answers with (MCP 2026-07-28: -32020 HeaderMismatch, -32021
 * MissingRequiredClientCapability, -32022 UnsupportedProtocolVersion): one of them answering a
 * probe identifies a modern server, so the client corrects the request instead of falling back.
 */
export function isModernError(error: unknown): error is McpError {
  return error instanceof McpError && (error.code === ErrorCode.HeaderMismatch
    || error.code === ErrorCode.MissingRequiredClientCapability || error.code === ErrorCode.UnsupportedProtocolVersion)
}

/** The `data.supported` list of a -32022 error, when it is a list of strings. */
export function supportedOf(error: McpError): string[] {
  const data = error.data
  const supported = isJsonObject(data) ? data.supported : undefined
  return Array.isArray(supported) ? supported.filter((version): version is string => typeof version === 'string') : []
}

/** What `server/discover` told about the server, read loosely. */
export interface DiscoverInfo {
  supportedVersions: string[]
  capabilities: ServerCapabilities
  serverInfo: Implementation | undefined
  instructions: string | undefined
}

/**
 * Reads a `server/discover` result: `supportedVersions` must be a list; the server's identity is
 * `_meta['io.modelcontextprotocol/serverInfo']` (a top-level `serverInfo`, which some servers
 * send, is accepted too). Undefined when the result is not a discover result at all (a legacy
 * server that answers unknown methods with `{}`).
 */
export function readDiscover(result: unknown): DiscoverInfo | undefined {
  if (!isJsonObject(result) || !Array.isArray(result.supportedVersions)) return undefined
  const meta = isJsonObject(result._meta) ? result._meta : undefined
  const info = meta?.[MetaKey.serverInfo] ?? result.serverInfo
  return {
    supportedVersions: result.supportedVersions.filter((version): version is string => typeof version === 'string'),
    capabilities: (isJsonObject(result.capabilities) ? result.capabilities : {}) as ServerCapabilities,
    serverInfo: isImplementation(info) ? info : undefined,
    instructions: typeof result.instructions === 'string' ? result.instructions : undefined,
  }
}

function isImplementation(value: unknown): value is Implementation {
  return isJsonObject(value) && typeof value.name === 'string' && typeof value.version === 'string'
}
