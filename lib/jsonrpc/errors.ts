import type { JsonRpcErrorObject, RequestId } from './message.ts'
import { urlElicitationsProblem } from '../schema/input-requests.ts'

/**
 * Error codes of JSON-RPC 2.0 and MCP, and rxmcp's own. Wire errors use these constants, never
 * literal numbers.
 *
 * MCP 2026-07-28 basic ("Error Codes") partitions JSON-RPC's implementation-defined range:
 * -32000..-32019 is legacy (codes SDKs allocated before; new ones MUST NOT be allocated there),
 * -32020..-32099 is the specification's alone (an implementation MUST NOT emit a code of it the
 * specification does not define), and new codes SHOULD sit outside -32768..-32000. So rxmcp's own
 * codes live in a block of their own, {@link RXMCP_ERROR_CODE_RANGE} (-31000..-31099), each the
 * old number plus 1000 (-32003 became -31003, -32029 became -31029; see {@link LegacyErrorCode}).
 */
export const ErrorCode = {
  /** Invalid JSON was received. */
  ParseError: -32700,
  /** The JSON is not a valid request object. */
  InvalidRequest: -32600,
  /** The method does not exist or is not available. */
  MethodNotFound: -32601,
  /** Invalid method parameters (also: unknown tool, bad cursor, unknown prompt). */
  InvalidParams: -32602,
  /** Internal error. */
  InternalError: -32603,
  /**
   * A request timed out: the official SDKs' code (legacy range, kept by MCP 2026-07-28 for
   * existing SDK usage). Local in rxmcp (`TimeoutError.wireCode`); the listener's "session not
   * found" (legacy era only) uses it as the official SDK does.
   */
  RequestTimeout: -32001,
  /**
   * The connection closed: the official SDKs' code (legacy range, kept for existing SDK usage).
   * rxmcp sends it where the official SDKs do: a bridge whose child process went away, and the
   * HTTP listener's transport-level refusals (a bad header, a full listener).
   */
  ConnectionClosed: -32000,
  /** MCP up to 2025-11-25: resource not found. Retired by 2026-07-28 (-32602 instead): never sent to a modern request. */
  ResourceNotFound: -32002,
  /** MCP 2025-11-25 only: the server needs the user to open a URL first (URL elicitation). Never sent to a modern request. */
  UrlElicitationRequired: -32042,
  /** MCP 2026-07-28: HTTP headers do not match the body, or a required one is missing or malformed. */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability its `_meta` did not declare. */
  MissingRequiredClientCapability: -32021,
  /** MCP 2026-07-28: the request's protocol version is not one the server serves. */
  UnsupportedProtocolVersion: -32022,
  /** rxmcp (no MCP code exists): the caller may not do this (scopes, permission policy); `data.requiredScopes` names missing scopes. */
  Forbidden: -31003,
  /** rxmcp (no MCP code exists): the caller sent too many requests; `data.retryAfterMs` says when to try again. */
  RateLimited: -31029,
} as const

/**
 * The block of codes rxmcp allocates for itself, outside JSON-RPC's reserved -32768..-32000 (MCP
 * 2026-07-28: new codes SHOULD be allocated there): -31000 to -31099, both included.
 */
export const RXMCP_ERROR_CODE_RANGE = { max: -31000, min: -31099 } as const

/**
 * The codes rxmcp sent before its own moved out of the reserved range: -32003 (Forbidden, legacy
 * range) and -32029 (RateLimited, the specification's range). Never sent any more; read by
 * {@link McpError.from} only from a peer recognisably an older rxmcp (see there).
 */
export const LegacyErrorCode = {
  Forbidden: -32003,
  RateLimited: -32029,
} as const

/** One of the known error codes. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

/**
 * An error that travels on the wire as a JSON-RPC error object.
 *
 * `toJSON()` gives the error object; {@link McpError.from} rebuilds the matching subclass from one.
 * @example
 * throw new InvalidParamsError('Unknown tool: nope')
 */
export class McpError extends Error {
  override name = 'McpError'
  readonly code: number
  readonly data?: unknown

  constructor(code: number, message: string, data?: unknown, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    if (data !== undefined) this.data = data
  }

  /** The JSON-RPC error object for this error. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data }
  }

  /**
   * Rebuilds an error from a wire error object, choosing the subclass by code. An older rxmcp's
   * -32003 and -32029 (see {@link LegacyErrorCode}) become {@link ForbiddenError} and
   * {@link RateLimitedError}, with today's codes, only when the error is recognisably rxmcp's (its
   * message or `data` is shaped as rxmcp wrote them): MCP 2026-07-28 says a receiver MUST NOT
   * assume a meaning for a code of -32000..-32019, and -32029 is the specification's to define, so
   * such a code from any other peer stays a plain McpError with the code it came with.
   */
  static from(wire: JsonRpcErrorObject): McpError {
    const make = subclassByCode.get(wire.code) ?? olderRxmcp(wire)
    return make ? make(wire.message, wire.data) : new McpError(wire.code, wire.message, wire.data)
  }
}

/** -32700: the bytes were not JSON. */
export class ParseError extends McpError {
  override name = 'ParseError'
  constructor(message = 'Parse error', data?: unknown) { super(ErrorCode.ParseError, message, data) }
}

/** -32600: JSON, but not a valid JSON-RPC message. */
export class InvalidRequestError extends McpError {
  override name = 'InvalidRequestError'
  constructor(message = 'Invalid Request', data?: unknown) { super(ErrorCode.InvalidRequest, message, data) }
}

/** -32601: no handler for the method (or the capability is not offered). */
export class MethodNotFoundError extends McpError {
  override name = 'MethodNotFoundError'
  constructor(message = 'Method not found', data?: unknown) { super(ErrorCode.MethodNotFound, message, data) }
}

/** -32602: the params are wrong. */
export class InvalidParamsError extends McpError {
  override name = 'InvalidParamsError'
  constructor(message = 'Invalid params', data?: unknown) { super(ErrorCode.InvalidParams, message, data) }
}

/** -32603: the handler failed. */
export class InternalError extends McpError {
  override name = 'InternalError'
  constructor(message = 'Internal error', data?: unknown) { super(ErrorCode.InternalError, message, data) }
}

/**
 * -32602: the client's answer to an elicitation is not one the server asked for: an accepted form
 * whose `content` does not match the `requestedSchema` (MCP 2025-11-25 elicitation: the content
 * of an accept is "the submitted data matching the requested schema"), or no valid `action`.
 * `ctx.elicit` rejects with it in either era, so a handler never sees content it did not ask for.
 * `data` is `{ key?, errors: [{ path, message }] }` (`key`: the input request's key, modern era).
 */
export class ElicitationContentError extends InvalidParamsError {
  override name = 'ElicitationContentError'
  constructor(message = 'Invalid params: the elicitation answer does not match its requestedSchema', data?: unknown) { super(message, data) }
}

/** -32002: no such resource. */
export class ResourceNotFoundError extends McpError {
  override name = 'ResourceNotFoundError'
  constructor(message = 'Resource not found', data?: unknown) { super(ErrorCode.ResourceNotFound, message, data) }
}

/** The `data` of a {@link UrlElicitationRequiredError}: the URL-mode elicitations to complete before the request is retried. */
export interface UrlElicitationRequiredData {
  readonly elicitations: ReadonlyArray<{ readonly mode: 'url'; readonly message: string; readonly url: string; readonly elicitationId: string; readonly [key: string]: unknown }>
  readonly [key: string]: unknown
}

/**
 * -32042 (MCP 2025-11-25): the user must complete URL elicitations before the request can go on.
 * It always lists them (the specification: the error MUST list the elicitations required before
 * a retry, each a URL-mode elicitation with an `elicitationId`): made without such a list it
 * throws a TypeError, so a handler's -32042 without one is answered -32603 instead, and a peer's
 * -32042 without one is rebuilt by {@link McpError.from} as a plain McpError.
 * @throws TypeError when `data.elicitations` is not a non-empty list of URL elicitations, each with
 *   mode "url", a message, a valid url and an elicitationId.
 * @example
 * throw new UrlElicitationRequiredError('Connect your account first', {
 *   elicitations: [{ mode: 'url', elicitationId: id, url: `https://example.com/connect?id=${id}`, message: 'Connect your account' }],
 * })
 */
export class UrlElicitationRequiredError extends McpError {
  override name = 'UrlElicitationRequiredError'
  declare readonly data: UrlElicitationRequiredData
  constructor(message: string, data: UrlElicitationRequiredData) { super(ErrorCode.UrlElicitationRequired, message, checkedUrlElicitations(data)) }
}

/** `data` when it lists URL elicitations as a {@link UrlElicitationRequiredError} must; throws TypeError otherwise. */
function checkedUrlElicitations(data: UrlElicitationRequiredData): UrlElicitationRequiredData {
  const problem = urlElicitationsProblem((data as { elicitations?: unknown } | undefined)?.elicitations)
  if (problem !== undefined) throw new TypeError(`A UrlElicitationRequiredError (-32042) lists the URL elicitations to complete: ${problem}`)
  return data
}

/** -32020 (MCP 2026-07-28): the HTTP headers and the body disagree, or a required header is missing or malformed. */
export class HeaderMismatchError extends McpError {
  override name = 'HeaderMismatchError'
  constructor(message = 'Header mismatch', data?: unknown) { super(ErrorCode.HeaderMismatch, message, data) }
}

/** -32021 (MCP 2026-07-28): `data.requiredCapabilities` is a ClientCapabilities object of what was missing. */
export class MissingRequiredClientCapabilityError extends McpError {
  override name = 'MissingRequiredClientCapabilityError'
  constructor(message = 'Missing required client capability', data?: unknown) { super(ErrorCode.MissingRequiredClientCapability, message, data) }
}

/** -32022 (MCP 2026-07-28): `data` is `{ supported: string[], requested: string }`. */
export class UnsupportedProtocolVersionError extends McpError {
  override name = 'UnsupportedProtocolVersionError'
  constructor(message = 'Unsupported protocol version', data?: unknown) { super(ErrorCode.UnsupportedProtocolVersion, message, data) }
}

/** -31003 (rxmcp; -32003 before): the request's principal lacks a scope or a permission it needs. */
export class ForbiddenError extends McpError {
  override name = 'ForbiddenError'
  constructor(message = 'Forbidden', data?: unknown) { super(ErrorCode.Forbidden, message, data) }
}

/** -31029 (rxmcp; -32029 before): the principal's request budget is spent; `data.retryAfterMs` says for how long. */
export class RateLimitedError extends McpError {
  override name = 'RateLimitedError'
  constructor(message = 'Too many requests', data?: unknown) { super(ErrorCode.RateLimited, message, data) }
}

/**
 * `error` as it may answer a request of the modern era. MCP 2026-07-28 basic ("Error Codes"):
 * implementations of that revision MUST NOT emit -32002 or -32042. So -32002 (a resource not
 * found, thrown by code written for earlier revisions) goes as -32602 with the same message and
 * data (2026-07-28 resources: an unknown resource is -32602), and -32042 (URL elicitation required,
 * 2025-11-25 only), when nothing turned it into an input round first, as -32603 saying so. Any
 * other error is returned as it is.
 */
export function toModernWireError(error: McpError): McpError {
  if (error.code === ErrorCode.ResourceNotFound) return new InvalidParamsError(error.message, error.data)
  if (error.code === ErrorCode.UrlElicitationRequired) {
    return new InternalError(`Internal error: ${error.message} (URL elicitation by error is MCP 2025-11-25 only; in the modern era a handler of tools/call, prompts/get or resources/read asks with ctx.elicit({ mode: 'url', ... }))`)
  }
  return error
}

/** Which bound of {@link StructureLimitError} a message broke. */
export type StructureBound = 'maxDepth' | 'maxMembers'

/** What a codec read of a message it refused for its structure. */
export interface StructureLimitDetails {
  /** The top-level `"id"`, when the codec found one before giving up on the message. */
  id?: RequestId
  /** `'request'` after a top-level `method` or `params`, `'response'` after `result` or `error`. */
  kind?: 'request' | 'response'
}

/**
 * -32700: a message nested deeper than `maxDepth` levels, or holding more than `maxMembers` object
 * entries and array elements, refused by the codec before it was parsed (see `STRUCTURE_DEFAULTS`).
 * `data` is `{ bound, limit }`. Like {@link FrameTooLargeError}, it carries the message's `id` and
 * `kind` when they could be read, so a refused request is answered with its id and a refused
 * response fails the request waiting for it, and the connection goes on.
 */
export class StructureLimitError extends ParseError {
  override name = 'StructureLimitError'
  readonly id?: RequestId
  readonly kind?: 'request' | 'response'
  constructor(readonly bound: StructureBound, readonly limit: number, details: StructureLimitDetails = {}) {
    super(bound === 'maxDepth'
      ? `Parse error: the message nests deeper than ${limit} levels (maxDepth)`
      : `Parse error: the message holds more than ${limit} object members and array elements (maxMembers)`, { bound, limit })
    if (details.id !== undefined) this.id = details.id
    if (details.kind !== undefined) this.kind = details.kind
  }
}

const subclassByCode = new Map<number, (message: string, data: unknown) => McpError>([
  [ErrorCode.ParseError, (m, d) => new ParseError(m, d)],
  [ErrorCode.InvalidRequest, (m, d) => new InvalidRequestError(m, d)],
  [ErrorCode.MethodNotFound, (m, d) => new MethodNotFoundError(m, d)],
  [ErrorCode.InvalidParams, (m, d) => new InvalidParamsError(m, d)],
  [ErrorCode.InternalError, (m, d) => new InternalError(m, d)],
  [ErrorCode.ResourceNotFound, (m, d) => new ResourceNotFoundError(m, d)],
  // A -32042 that lists no URL elicitation is not one MCP defines: kept as the peer sent it.
  [ErrorCode.UrlElicitationRequired, (m, d) => isObjectWith(d, 'elicitations') && urlElicitationsProblem(d.elicitations) === undefined
    ? new UrlElicitationRequiredError(m, d as unknown as UrlElicitationRequiredData) : new McpError(ErrorCode.UrlElicitationRequired, m, d)],
  [ErrorCode.HeaderMismatch, (m, d) => new HeaderMismatchError(m, d)],
  [ErrorCode.MissingRequiredClientCapability, (m, d) => new MissingRequiredClientCapabilityError(m, d)],
  [ErrorCode.UnsupportedProtocolVersion, (m, d) => new UnsupportedProtocolVersionError(m, d)],
  [ErrorCode.Forbidden, (m, d) => new ForbiddenError(m, d)],
  [ErrorCode.RateLimited, (m, d) => new RateLimitedError(m, d)],
])

/** True when `value` is an object with the own key `key`. */
function isObjectWith<K extends string>(value: unknown, key: K): value is Record<K, unknown> {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key)
}

/**
 * The subclass of an older rxmcp's -32003 or -32029, when the error reads as rxmcp wrote it: a
 * message starting "Forbidden" or an OAuth `data.error` / `data.requiredScopes` (-32003); a message
 * starting "Too many" or a `data.retryAfterMs` (-32029). Undefined for anything else.
 */
function olderRxmcp(wire: JsonRpcErrorObject): ((message: string, data: unknown) => McpError) | undefined {
  const message = typeof wire.message === 'string' ? wire.message : ''
  const data = typeof wire.data === 'object' && wire.data !== null ? wire.data as Record<string, unknown> : undefined
  if (wire.code === LegacyErrorCode.Forbidden) {
    const isOurs = message.startsWith('Forbidden') || typeof data?.error === 'string' || Array.isArray(data?.requiredScopes)
    return isOurs ? (m, d) => new ForbiddenError(m, d) : undefined
  }
  if (wire.code === LegacyErrorCode.RateLimited) {
    const isOurs = /^too many/i.test(message) || typeof data?.retryAfterMs === 'number'
    return isOurs ? (m, d) => new RateLimitedError(m, d) : undefined
  }
  return undefined
}

/** String codes of local errors, which never cross the wire. */
export const LocalErrorCode = {
  Timeout: 'RXMCP_ERR_TIMEOUT',
  Cancelled: 'RXMCP_ERR_CANCELLED',
  ConnectionClosed: 'RXMCP_ERR_CONNECTION_CLOSED',
  Transport: 'RXMCP_ERR_TRANSPORT',
  FrameTooLarge: 'RXMCP_ERR_FRAME_TOO_LARGE',
  Capability: 'RXMCP_ERR_CAPABILITY',
  Protocol: 'RXMCP_ERR_PROTOCOL',
  Version: 'RXMCP_ERR_UNSUPPORTED_VERSION',
  TaskCancelled: 'RXMCP_ERR_TASK_CANCELLED',
  SkillVerification: 'RXMCP_ERR_SKILL_VERIFICATION',
  Unauthorized: 'RXMCP_ERR_UNAUTHORIZED',
  ToolName: 'RXMCP_WARN_TOOL_NAME',
  Progress: 'RXMCP_WARN_PROGRESS',
  RegistryMismatch: 'RXMCP_WARN_REGISTRY_MISMATCH',
} as const

/** One of the local error codes. */
export type LocalErrorCode = (typeof LocalErrorCode)[keyof typeof LocalErrorCode]

/** Base of every local error: a string `code`, a `name`, and the `cause` kept. */
export abstract class LocalError extends Error {
  abstract readonly code: LocalErrorCode
}

/** A request ran past its timeout (reset by progress) or its hard maximum; it was cancelled on the wire. */
export class TimeoutError extends LocalError {
  override name = 'TimeoutError'
  readonly code = LocalErrorCode.Timeout
  /** -32001: the wire code the SDKs use for the same condition. */
  readonly wireCode = ErrorCode.RequestTimeout
  constructor(message = 'Request timed out', readonly timeout?: number, options?: { cause?: unknown }) { super(message, options) }
}

/** A task ended cancelled (on the server's side): what waiting for its result fails with. */
export class TaskCancelledError extends LocalError {
  override name = 'TaskCancelledError'
  readonly code = LocalErrorCode.TaskCancelled
  constructor(readonly taskId: string, options?: { cause?: unknown }) { super(`Task ${taskId} was cancelled`, options) }
}

/** The request was cancelled locally (unsubscribed or aborted). */
export class CancelledError extends LocalError {
  override name = 'CancelledError'
  readonly code = LocalErrorCode.Cancelled
  constructor(message = 'Request cancelled', options?: { cause?: unknown }) { super(message, options) }
}

/** The connection closed before the request was answered. */
export class ConnectionClosedError extends LocalError {
  override name = 'ConnectionClosedError'
  readonly code = LocalErrorCode.ConnectionClosed
  constructor(message = 'Connection closed', options?: { cause?: unknown }) { super(message, options) }
}

/** The transport failed (process died, socket error, write after close). */
export class TransportError extends LocalError {
  override name = 'TransportError'
  // Widened for UnauthorizedError (lib/unauthorized-error.ts), a TransportError with a code of its own.
  readonly code: typeof LocalErrorCode.Transport | typeof LocalErrorCode.Unauthorized = LocalErrorCode.Transport
  constructor(message = 'Transport error', options?: { cause?: unknown }) { super(message, options) }
}

/**
 * An HTTP client transport's request answered with an error status and no JSON-RPC error in its
 * body: `status` is the HTTP status (`UnauthorizedError` is one, for 401 and 403
 * `insufficient_scope`). The handshake reads it: only 400, 404 and 405 say "a server of the legacy
 * era" (MCP 2026-07-28 Streamable HTTP, backward compatibility), any other status fails `connect`.
 */
export class HttpStatusError extends TransportError {
  override name = 'HttpStatusError'
  /** The HTTP status of the answer. */
  readonly status: number
  constructor(message: string, status: number, options?: { cause?: unknown }) {
    super(message, options)
    this.status = status
  }
}

/**
 * The response stream of a modern-era request (MCP 2026-07-28 Streamable HTTP) broke or ended
 * before its response: with no resumption in that revision, the request is lost, and the client
 * re-issues it once under a new id before failing with this.
 */
export class ResponseLostError extends TransportError {
  override name = 'ResponseLostError'
  constructor(message = 'The response stream ended before its response', options?: { cause?: unknown }) { super(message, options) }
}

/** What the head (and tail) of an oversized frame told about it, read without parsing the frame. */
export interface FrameTooLargeDetails {
  cause?: unknown
  /** The frame's size in bytes, when it is known (a line is measured to its end while being skipped). */
  size?: number
  /** The top-level `"id"` found near the start or the end of the frame. */
  id?: RequestId
  /** `'request'` when a top-level `method` or `params` was seen, `'response'` for `result` or `error`. */
  kind?: 'request' | 'response'
}

/**
 * An incoming frame was over the configured maximum size. It names the size (when known) and the
 * limit. A codec that could read the frame's id from its first or last bytes sets `id` and `kind`,
 * so the connection answers the oversized request with its id, or fails the pending request whose
 * answer was too big, instead of leaving either side to time out.
 */
export class FrameTooLargeError extends LocalError {
  override name = 'FrameTooLargeError'
  readonly code = LocalErrorCode.FrameTooLarge
  readonly size?: number
  readonly id?: RequestId
  readonly kind?: 'request' | 'response'
  constructor(readonly limit: number, message?: string, options: FrameTooLargeDetails = {}) {
    super(message ?? (options.size === undefined
      ? `Message exceeds the limit of ${limit} bytes`
      : `Message of ${options.size} bytes exceeds the limit of ${limit} bytes`), options.cause === undefined ? undefined : { cause: options.cause })
    if (options.size !== undefined) this.size = options.size
    if (options.id !== undefined) this.id = options.id
    if (options.kind !== undefined) this.kind = options.kind
  }
}

/** A request needs a capability the peer did not declare; refused before it reaches the wire. */
export class CapabilityError extends LocalError {
  override name = 'CapabilityError'
  readonly code = LocalErrorCode.Capability
  constructor(message: string, options?: { cause?: unknown }) { super(message, options) }
}

/** The peer broke the protocol in a way that ends the session (for example, no usable version). */
export class ProtocolError extends LocalError {
  override name = 'ProtocolError'
  readonly code = LocalErrorCode.Protocol
  constructor(message: string, options?: { cause?: unknown }) { super(message, options) }
}

/** The server answered initialize with a protocol version this client does not support. */
export class UnsupportedVersionError extends LocalError {
  override name = 'UnsupportedVersionError'
  readonly code = LocalErrorCode.Version
  constructor(readonly version: string, readonly supported: readonly string[], options?: { cause?: unknown }) {
    super(`Server chose protocol version ${JSON.stringify(version)}; this client supports ${supported.join(', ')}`, options)
  }
}
