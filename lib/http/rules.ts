/**
 * Streamable HTTP's rules, pure: what the listener does with a request, decided from its method,
 * path, the few headers each step reads (Origin, Host, Accept, Content-Type, Mcp-Session-Id,
 * MCP-Protocol-Version, Last-Event-ID ...), the listener's options and, where a step needs them,
 * facts about the body and the session the request names. Each function gives an action or an
 * {@link HttpRefusal} with the status, JSON-RPC code, message and ids the listener answers; the
 * listener (transports/streamable-http.ts) reads the request, asks, and acts. No I/O here.
 *
 * A request goes through them in this order (the I/O steps between are the listener's):
 *
 * ```
 * routeRequest ---------- origin, host -> 403; OPTIONS -> preflight; path -> route
 *   [auth: 401/403/429, cluster forwarding]
 *   mcp:                  mcpRequest: method, version -> post | get-stream | delete-session | 400/405/406/415
 *     post:               [body: 413/408]  checkPostBody -> 400 (-32700, -32600)
 *                         [authorize: 403, rateLimit: 429]  classifyPost -> post-modern | post-stateless
 *                                                            | post-initialize | post-session | 400
 *       post-modern:      checkModernPost (lib/http/modern-rules.ts) -> serve-modern | modern-notification | 400
 *       post-initialize:  [admission: 429/503, session id: 500]
 *       post-session:     checkSession -> 400/404;  checkRequestIds -> 400
 *     get-stream, delete-session: checkSession -> 400/404
 *   legacy-sse-open:      legacySseOpen: Accept -> 406
 *   legacy-sse-message:   legacySseMessage: session, Content-Type -> 404/415
 * ```
 *
 * Actions are constants: asking allocates nothing unless the answer is a refusal that names the
 * request's ids or a dynamic message.
 */
import { ErrorCode, StructureLimitError } from '../jsonrpc/errors.ts'
import { checkMessage, isCheckFailure } from '../jsonrpc/guards.ts'
import type { RequestId } from '../jsonrpc/message.ts'
import { isAllowedHost, isAllowedOrigin } from './origin.ts'
import { isModernPost } from './modern-rules.ts'
import type { BodyRequests } from './requests.ts'
import {
  HOST_NOT_ALLOWED, LEGACY_SESSION_NOT_FOUND, METHOD_NOT_ALLOWED, ORIGIN_NOT_ALLOWED, STATELESS_METHOD_NOT_ALLOWED,
  UNSUPPORTED_MEDIA_TYPE, refusal, type HttpRefusal, type RefusedIds,
} from './refusal.ts'

/** The listener's options the rules read, resolved once when the listener is made. */
export interface HttpRules {
  /** The MCP endpoint's path (`/mcp`). */
  readonly path: string
  /** Where a legacy HTTP+SSE client GETs its stream; undefined when legacy SSE is off. */
  readonly legacySsePath: string | undefined
  /** Where a legacy HTTP+SSE client POSTs. */
  readonly legacyMessagesPath: string
  /** Origins allowed to call (undefined: http(s) on the loopback names). */
  readonly allowedOrigins: readonly string[] | undefined
  /** Host header values allowed (undefined: the loopback names on a loopback listener, else any). */
  readonly allowedHosts: readonly string[] | undefined
  /** The interface the listener is bound to, for the default Host rule. */
  readonly boundHost: string
  /** No sessions: every POST is served alone, GET and DELETE are 405. */
  readonly isStateless: boolean
  /** Versions accepted in MCP-Protocol-Version, both eras. */
  readonly versions: readonly string[]
  /** The modern ones among them (a legacy-only list still answers a modern POST as 2026-07-28 does). */
  readonly modernVersions: readonly string[]
  /** Refuse a supported MCP-Protocol-Version other than the session's. */
  readonly isStrictVersion: boolean
}

/**
 * Where a request goes once its origin and host pass: `isGuarded` paths are authenticated (with
 * `auth`), and in cluster mode a request naming a session (`sessionIdIn`: the Mcp-Session-Id
 * header, or the legacy `sessionId` query parameter) goes to the instance holding it.
 */
export type HttpRoute =
  | { readonly type: 'preflight' }
  | { readonly type: 'mcp'; readonly isGuarded: true; readonly sessionIdIn: 'header' }
  | { readonly type: 'legacy-sse-open'; readonly isGuarded: true; readonly sessionIdIn: 'query' | undefined }
  | { readonly type: 'legacy-sse-message'; readonly isGuarded: true; readonly sessionIdIn: 'query' }
  /** Answered with NOT_FOUND, after authentication when the path is guarded. */
  | { readonly type: 'not-found'; readonly isGuarded: boolean; readonly sessionIdIn: 'query' | undefined }

const PREFLIGHT: HttpRoute = { type: 'preflight' }
const MCP: HttpRoute = { type: 'mcp', isGuarded: true, sessionIdIn: 'header' }
const LEGACY_OPEN: HttpRoute = { type: 'legacy-sse-open', isGuarded: true, sessionIdIn: undefined }
/** The same, on a listener whose two legacy paths are one: a request there names its session in the query. */
const LEGACY_OPEN_AT_MESSAGES: HttpRoute = { type: 'legacy-sse-open', isGuarded: true, sessionIdIn: 'query' }
const LEGACY_MESSAGE: HttpRoute = { type: 'legacy-sse-message', isGuarded: true, sessionIdIn: 'query' }
const NOT_FOUND_OPEN: HttpRoute = { type: 'not-found', isGuarded: false, sessionIdIn: undefined }
const NOT_FOUND_GUARDED: HttpRoute = { type: 'not-found', isGuarded: true, sessionIdIn: undefined }
const NOT_FOUND_MESSAGES: HttpRoute = { type: 'not-found', isGuarded: true, sessionIdIn: 'query' }

/**
 * The first rule of every request: DNS-rebinding protection (a foreign Origin, then a foreign
 * Host: 403), a CORS preflight (OPTIONS, any path), then the route by path and method.
 */
export function routeRequest(rules: HttpRules, method: string, pathname: string, origin: string | null, host: string | null): HttpRoute | HttpRefusal {
  if (origin !== null && !isAllowedOrigin(origin, rules.allowedOrigins)) return ORIGIN_NOT_ALLOWED
  if (!isAllowedHost(host, rules.allowedHosts, rules.boundHost)) return HOST_NOT_ALLOWED
  if (method === 'OPTIONS') return PREFLIGHT
  if (pathname === rules.path) return MCP
  const legacySse = rules.legacySsePath
  if (legacySse === undefined) return NOT_FOUND_OPEN
  const isMessages = pathname === rules.legacyMessagesPath
  if (pathname === legacySse && method === 'GET') return isMessages ? LEGACY_OPEN_AT_MESSAGES : LEGACY_OPEN
  if (isMessages) return method === 'POST' ? LEGACY_MESSAGE : NOT_FOUND_MESSAGES
  return pathname === legacySse ? NOT_FOUND_GUARDED : NOT_FOUND_OPEN
}

/**
 * The route of a request another instance forwarded (cluster mode): its front checked origin,
 * host and credentials already. Only the endpoint and the legacy `/messages` POST are forwarded.
 */
export function routeForwarded(rules: HttpRules, method: string, pathname: string): HttpRoute {
  if (pathname === rules.path) return MCP
  return pathname === rules.legacyMessagesPath && method === 'POST' ? LEGACY_MESSAGE : NOT_FOUND_OPEN
}

/** What the MCP endpoint does with a request: its method's handling (see {@link mcpRequest}). */
export type McpAction = { readonly type: 'post' } | { readonly type: 'get-stream' } | { readonly type: 'delete-session' }

const POST: McpAction = { type: 'post' }
const GET_STREAM: McpAction = { type: 'get-stream' }
const DELETE_SESSION: McpAction = { type: 'delete-session' }

/** 406 for a POST that does not accept both answers it may get. */
const POST_NOT_ACCEPTABLE = refusal(406, ErrorCode.ConnectionClosed, 'Not Acceptable: the client must accept both application/json and text/event-stream')
/** 406 for a GET that does not accept an SSE stream. */
const GET_NOT_ACCEPTABLE = refusal(406, ErrorCode.ConnectionClosed, 'Not Acceptable: the client must accept text/event-stream')

/**
 * A request to the MCP endpoint, before any body is read. A GET or DELETE with an unsupported
 * MCP-Protocol-Version is 400 (a POST's version is checked with its body, so that the refusal
 * carries its id: see {@link classifyPost}); GET and DELETE are 405 on a stateless listener; a POST
 * must accept JSON and SSE (406) and send JSON (415), a GET must accept SSE (406); other methods 405.
 */
export function mcpRequest(rules: HttpRules, method: string, protocolVersion: string | null, accept: string | null, contentType: string | null): McpAction | HttpRefusal {
  if (method !== 'POST' && !isVersionSupported(rules, protocolVersion)) return unsupportedVersion(protocolVersion, null)
  switch (method) {
    case 'POST': {
      const accepts = accept ?? ''
      if (!accepts.includes('application/json') || !accepts.includes('text/event-stream')) return POST_NOT_ACCEPTABLE
      return isJsonContentType(contentType) ? POST : UNSUPPORTED_MEDIA_TYPE
    }
    case 'GET':
      if (rules.isStateless) return STATELESS_METHOD_NOT_ALLOWED
      return (accept ?? '').includes('text/event-stream') ? GET_STREAM : GET_NOT_ACCEPTABLE
    case 'DELETE': return rules.isStateless ? STATELESS_METHOD_NOT_ALLOWED : DELETE_SESSION
    default: return METHOD_NOT_ALLOWED
  }
}

/** MCP 2025-06-18 transports: an MCP-Protocol-Version the listener does not accept is answered 400. */
export function isVersionSupported(rules: HttpRules, protocolVersion: string | null): boolean {
  return protocolVersion === null || rules.versions.includes(protocolVersion)
}

/** 400, -32000: an unsupported MCP-Protocol-Version (with the POST's request ids when it had a body). */
export function unsupportedVersion(protocolVersion: string | null, id: RefusedIds): HttpRefusal {
  return refusal(400, ErrorCode.ConnectionClosed, `Bad Request: unsupported protocol version ${protocolVersion}`, id)
}

/**
 * True when the request's Content-Type is JSON: its media type (before any parameter) is exactly
 * application/json. A check for the substring would pass `text/plain; x=application/json`, which a
 * browser sends cross-origin without a CORS preflight, as it does text/plain and form bodies.
 */
export function isJsonContentType(contentType: string | null): boolean {
  if (contentType === null) return false
  const semicolon = contentType.indexOf(';')
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() === 'application/json'
}

/** A body as the JSON codec decoded it (lib/codec/json.ts). */
export type DecodedBody = { readonly type: 'message'; readonly message: unknown } | { readonly type: 'invalid'; readonly error: Error }

const BAD_ID = refusal(400, ErrorCode.InvalidRequest, 'Invalid Request: an id must be a string or a finite number')

/**
 * A POST's body, once read: JSON that does not parse, or that passes `structureLimits`, is 400
 * -32700 (with the id the codec read, for a structure limit); an id that is not a finite number
 * (1e400 parses to Infinity, which no answer could carry back) is 400 -32600. Undefined: it passes.
 */
export function checkPostBody(decoded: DecodedBody, requests: BodyRequests | undefined): HttpRefusal | undefined {
  if (decoded.type === 'invalid') {
    const error = decoded.error
    return refusal(400, ErrorCode.ParseError, error.message, error instanceof StructureLimitError ? error.id ?? null : null)
  }
  if (requests === undefined) return undefined
  if (requests.hasBadId) return BAD_ID
  // MCP Streamable HTTP: a body of notifications and responses is answered 202 when accepted, and
  // "if the server cannot accept the input, it MUST return an HTTP error status code". No request
  // is left to carry the error on a stream, so a message that is no JSON-RPC message is refused here.
  if (requests.ids.length === 0 && decoded.type === 'message') {
    const payload = decoded.message
    for (const message of Array.isArray(payload) ? payload : [payload]) {
      const checked = checkMessage(message)
      if (isCheckFailure(checked)) return refusal(400, checked.error.code, checked.error.message, checked.id)
    }
  }
  return undefined
}

/**
 * What a refusal of a POST answers (JSON-RPC 2.0 §5: an error about a request carries its id
 * whenever the request had one): a batch's request ids (one error each), else its one request's id
 * (null when it has none).
 */
export function answersOf(payload: unknown, ids: readonly RequestId[]): RefusedIds {
  return Array.isArray(payload) ? ids : (ids[0] ?? null)
}

/**
 * How a POST is served, once its body passed and its caller was authorized: a modern-era request
 * (no session, see isModernPost), a stateless one, an initialize (a new session), or a request of
 * a session. `answers` is what a refusal answers ({@link answersOf}).
 */
export type PostAction =
  | { readonly type: 'post-modern' }
  | { readonly type: 'post-stateless' }
  | { readonly type: 'post-initialize' }
  | { readonly type: 'post-session' }

const POST_MODERN: PostAction = { type: 'post-modern' }
const POST_STATELESS: PostAction = { type: 'post-stateless' }
const POST_INITIALIZE: PostAction = { type: 'post-initialize' }
const POST_SESSION: PostAction = { type: 'post-session' }

/**
 * Classifies a POST by its body (`payload`, and its `requests`) and headers: modern-era first (its
 * own rules follow, see checkModernPost), then MCP-Protocol-Version (400 when unsupported, with the
 * request's ids), stateless mode, and initialize, which must come alone (400, -32600).
 */
export function classifyPost(rules: HttpRules, payload: unknown, requests: BodyRequests, sessionId: string | null, protocolVersion: string | null, answers: RefusedIds): PostAction | HttpRefusal {
  if (isModernPost(sessionId, protocolVersion, payload)) return POST_MODERN
  if (!isVersionSupported(rules, protocolVersion)) return unsupportedVersion(protocolVersion, answers)
  if (rules.isStateless) return POST_STATELESS
  if (!requests.isInitialize) return POST_SESSION
  if (Array.isArray(payload) && payload.length > 1) return refusal(400, ErrorCode.InvalidRequest, 'Invalid Request: initialize must be sent alone', answers)
  return POST_INITIALIZE
}

/** What the rules need of the session a request names (an HttpSession is one). */
export interface SessionFacts {
  /** The version its initialize negotiated, once answered. */
  readonly protocolVersion: string | undefined
}

/**
 * The session a POST (not an initialize), GET or DELETE names. No Mcp-Session-Id is 400; an id of
 * no Streamable HTTP session of the request's principal (`session` undefined: unknown, expired,
 * another principal's, a legacy SSE session's) is 404 -32001 (alike, so a guessed id learns
 * nothing); with `isStrictVersion`, a supported MCP-Protocol-Version other than the session's is
 * 400 (MCP 2025-06-18: the client SHOULD send the negotiated one). Undefined: it passes.
 */
export function checkSession(rules: HttpRules, sessionId: string | null, session: SessionFacts | undefined, protocolVersion: string | null, answers: RefusedIds = null): HttpRefusal | undefined {
  if (sessionId === null) return refusal(400, ErrorCode.ConnectionClosed, 'Bad Request: Mcp-Session-Id header is required', answers)
  if (session === undefined) return refusal(404, ErrorCode.RequestTimeout, 'Session not found', answers)
  const negotiated = session.protocolVersion
  if (rules.isStrictVersion && protocolVersion !== null && negotiated !== undefined && protocolVersion !== negotiated) {
    return refusal(400, ErrorCode.ConnectionClosed, `Bad Request: MCP-Protocol-Version ${protocolVersion} is not the session's ${negotiated}`, answers)
  }
  return undefined
}

/**
 * MCP basic: a request id is not reused in a session. A POST carrying an id still in flight
 * (`isInFlight`) is 400 -32600, refused before the connection sees it, since its answer would
 * otherwise take the first request's place on the first POST.
 */
export function checkRequestIds(ids: readonly RequestId[], isInFlight: (id: RequestId) => boolean, sessionId: string, answers: RefusedIds): HttpRefusal | undefined {
  const reused = ids.find(isInFlight)
  if (reused === undefined) return undefined
  return refusal(400, ErrorCode.InvalidRequest, `Invalid Request: request id ${JSON.stringify(reused)} is already in use`, answers, { 'mcp-session-id': sessionId })
}

const LEGACY_NOT_ACCEPTABLE = refusal(406, ErrorCode.ConnectionClosed, 'Not Acceptable')

/** A legacy `GET /sse`: it must accept an SSE stream (`*​/*` or no Accept will do). Undefined: it passes. */
export function legacySseOpen(accept: string | null): HttpRefusal | undefined {
  const accepts = accept ?? ''
  return !accepts.includes('text/event-stream') && !accepts.includes('*/*') && accepts !== '' ? LEGACY_NOT_ACCEPTABLE : undefined
}

/** The session a legacy `/messages` POST names (its `sessionId` query parameter). */
export function legacySessionIdOf(search: string): string | null {
  return new URLSearchParams(search).get('sessionId')
}

/**
 * A legacy `POST /messages`: it must name a legacy SSE session of its principal (`hasSession`;
 * else 404 in plain text, as the 2024-11-05 SDKs answer) and send JSON (415). Undefined: it passes.
 */
export function legacySseMessage(hasSession: boolean, contentType: string | null): HttpRefusal | undefined {
  if (!hasSession) return LEGACY_SESSION_NOT_FOUND
  return isJsonContentType(contentType) ? undefined : UNSUPPORTED_MEDIA_TYPE
}
