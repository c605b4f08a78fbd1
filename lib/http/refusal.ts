import { ErrorCode } from '../jsonrpc/errors.ts'

/** What a refusal answers: one request's id, a batch's request ids, or null when none was read. */
export type RefusedIds = string | number | readonly (string | number)[] | null

/**
 * How the Streamable HTTP listener turns a request down, as data (see lib/http/rules.ts); the
 * listener's adapter writes it. With a `code` the body is a JSON-RPC error (one per id of `id` when
 * it is a batch's ids, else one with `id`, null when absent) and `headers` come after
 * `content-type: application/json`; without one the body is `message` as it is (none when empty)
 * and `headers` are all the answer's headers.
 */
export interface HttpRefusal {
  readonly type: 'refuse'
  readonly status: number
  /** The JSON-RPC error code; absent for a plain answer (404 Not Found, 405). */
  readonly code?: number
  readonly message: string
  /** The requests the refusal answers (JSON-RPC 2.0 §5: their ids, null when none could be read). */
  readonly id?: RefusedIds
  readonly headers?: Readonly<Record<string, string>>
  /** The JSON-RPC error's `data`, when it has one. */
  readonly data?: unknown
  /** Answer and drop the connection without reading the rest of the request (413, 408). */
  readonly isDropped?: boolean
}

/** A JSON-RPC error refusal. */
export function refusal(status: number, code: number, message: string, id: RefusedIds = null, headers?: Readonly<Record<string, string>>): HttpRefusal {
  return headers === undefined ? { type: 'refuse', status, code, message, id } : { type: 'refuse', status, code, message, id, headers }
}

/** The seconds of a Retry-After header for a wait in ms: whole seconds, at least 1. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000))
}

const TEXT_PLAIN = { 'content-type': 'text/plain' } as const

/** 404 for a path the listener does not serve. */
export const NOT_FOUND: HttpRefusal = { type: 'refuse', status: 404, message: 'Not Found', headers: TEXT_PLAIN }

/** 404 for a legacy `/messages` POST naming no session of its principal. */
export const LEGACY_SESSION_NOT_FOUND: HttpRefusal = { type: 'refuse', status: 404, message: 'Session not found', headers: TEXT_PLAIN }

/** 405 for a method the MCP endpoint does not serve. */
export const METHOD_NOT_ALLOWED: HttpRefusal = {
  type: 'refuse', status: 405, message: 'Method Not Allowed', headers: { allow: 'GET, POST, DELETE, OPTIONS', 'content-type': 'text/plain' },
}

/** 405 for GET and DELETE on a stateless listener: it has no session to stream or end. */
export const STATELESS_METHOD_NOT_ALLOWED: HttpRefusal = { type: 'refuse', status: 405, message: '', headers: { allow: 'POST' } }

/** 403: a page on a foreign origin must not reach a local server (DNS rebinding). */
export const ORIGIN_NOT_ALLOWED = refusal(403, ErrorCode.ConnectionClosed, 'Forbidden: origin not allowed')

/** 403: a Host the listener does not answer to (DNS rebinding). */
export const HOST_NOT_ALLOWED = refusal(403, ErrorCode.ConnectionClosed, 'Forbidden: host not allowed')

/** 413: the body passed `maxBodyBytes`; the connection is dropped unread. */
export const BODY_TOO_LARGE: HttpRefusal = { ...refusal(413, ErrorCode.ConnectionClosed, 'Payload Too Large'), isDropped: true }

/** 408: the body did not arrive within `bodyTimeoutMs`; the connection is dropped. */
export const BODY_TIMEOUT: HttpRefusal = { ...refusal(408, ErrorCode.ConnectionClosed, 'Request Timeout: the body did not arrive in time'), isDropped: true }

/** 415: a body that is not JSON (a text/plain or form POST is a CORS simple request, sent without preflight). */
export const UNSUPPORTED_MEDIA_TYPE = refusal(415, ErrorCode.ConnectionClosed, 'Unsupported Media Type: Content-Type must be application/json')

/** 404 for a GET resuming an event id this session cannot replay. */
export const UNKNOWN_LAST_EVENT_ID = refusal(404, ErrorCode.ConnectionClosed, 'Unknown Last-Event-ID')

/** 429: the session holds `maxStreamsPerSession` streams, all with a client on them. */
export function tooManyStreams(sessionId: string, id: RefusedIds = null): HttpRefusal {
  return refusal(429, ErrorCode.ConnectionClosed, 'Too Many Requests: too many open streams in this session', id, { 'mcp-session-id': sessionId })
}

/**
 * A new session refused at `maxSessionsPerClient` (`'client'`: 429, -31029) or `maxSessions`
 * (`'total'`: 503), with Retry-After: when a session becomes evictable.
 */
export function sessionsFull(reason: 'client' | 'total', retryAfterMs: number, id: RefusedIds = null): HttpRefusal {
  const retry = { 'retry-after': String(retryAfterSeconds(retryAfterMs)) }
  return reason === 'client'
    ? refusal(429, ErrorCode.RateLimited, 'Too Many Requests: too many sessions of this client', id, retry)
    : refusal(503, ErrorCode.ConnectionClosed, 'Service Unavailable: too many sessions', id, retry)
}

/** One of a client's own requests (or anyone's) ending makes room: no time anyone can know. */
const RETRY_IN_A_SECOND = { 'retry-after': '1' } as const

/**
 * A sessionless request (modern era, stateless) refused at `maxExchangesPerClient` (`'client'`:
 * 429, -31029) or `maxExchanges` (`'total'`: 503), with Retry-After: 1.
 */
export function exchangesFull(reason: 'client' | 'total', id: RefusedIds): HttpRefusal {
  return reason === 'client'
    ? refusal(429, ErrorCode.RateLimited, 'Too Many Requests: too many requests of this client in progress', id, RETRY_IN_A_SECOND)
    : refusal(503, ErrorCode.ConnectionClosed, 'Service Unavailable: too many requests in progress', id, RETRY_IN_A_SECOND)
}

/** 429, -31029 per request: a POST over its caller's `rateLimit` budget. */
export function overRequestBudget(waitMs: number, id: RefusedIds): HttpRefusal {
  const seconds = retryAfterSeconds(waitMs)
  return refusal(429, ErrorCode.RateLimited, `Too many requests: try again in ${seconds} s`, id, { 'retry-after': String(seconds) })
}

/** 429, -31029, id null: an address past its `failedAuthLimit` budget, not verified at all. */
export function overFailedAuthBudget(waitMs: number): HttpRefusal {
  const seconds = retryAfterSeconds(waitMs)
  return refusal(429, ErrorCode.RateLimited, `Too many failed authentications: try again in ${seconds} s`, null, { 'retry-after': String(seconds) })
}

/** 500: the session id generator gave an id already in use. */
export function sessionIdRepeated(id: RefusedIds = null): HttpRefusal {
  return refusal(500, ErrorCode.InternalError, 'Internal error: the session id generator repeated an id in use', id)
}

/** A request to a listener that was closed (a web handler outlives its `close()`; a socket does not). */
export const HANDLER_CLOSED = refusal(503, ErrorCode.ConnectionClosed, 'Service Unavailable: the server is closed')

/** A new session asked of an instance that is draining (a rolling restart): another instance takes it. */
export function draining(answers: RefusedIds = null): HttpRefusal {
  return refusal(503, ErrorCode.ConnectionClosed, 'Service Unavailable: this server instance is shutting down; connect again', answers, { 'retry-after': '1' })
}
