/**
 * Who is calling, as the transports learn it and handlers see it: the types of authorization that
 * every layer shares, and the one rule every transport applies to every inbound message
 * ({@link authorizeMessage}). No I/O and no crypto here; token verification and the OAuth flows
 * live in `auth/` (the `rxmcp/auth` subpath), loaded only by servers and clients that use them.
 */
import { ErrorCode } from './jsonrpc/errors.ts'
import type { JsonRpcErrorObject } from './jsonrpc/message.ts'

/**
 * The authenticated caller of a request: what a verified access token (or a WebSocket upgrade's
 * credentials) says. Handlers read it as `ctx.principal`; it is undefined without authentication.
 */
export interface Principal {
  /** The subject the token was issued for (the `sub` claim): a user, or a client acting for itself. */
  readonly subject: string
  /**
   * What kind of subject `subject` names, since a user and an OAuth client may carry the same name:
   * `user` for a token with a `sub` claim (the resource owner, or whatever the issuer names in
   * `sub`), `client` for a token without one whose subject is its client (`client_id` / `azp`, a
   * client-credentials token). The built-in verifiers always set it; a principal without it (a
   * custom verifier that did not say) is a kind of its own, equal to neither.
   */
  readonly kind?: PrincipalKind
  /** The scopes the token grants. */
  readonly scopes: readonly string[]
  /** The OAuth client the token was issued to (`client_id` / `azp`), when known. */
  readonly clientId?: string
  /** The issuer of the token (`iss`), when known. */
  readonly issuer?: string
  /** When the token expires, in seconds since the epoch (`exp`), when known. */
  readonly expiresAt?: number
  /** Every claim of the token (or of the introspection answer), for policies that need more. */
  readonly claims?: Readonly<Record<string, unknown>>
}

/** The kinds of subject a {@link Principal} names. */
export const PrincipalKind = { User: 'user', Client: 'client' } as const

/** `user` or `client`; see {@link Principal.kind}. */
export type PrincipalKind = (typeof PrincipalKind)[keyof typeof PrincipalKind]

/**
 * A stable key naming a principal, to bind state (a session, a task, a listen stream, an MRTR
 * request state, a rate budget) to it: its issuer, its kind and its subject; '' without a
 * principal. A refreshed token of the same subject keeps the key; its scopes may differ. The parts
 * are encoded as a JSON array, so no issuer or subject, whatever characters it holds, can make the
 * key of another (user `alice` and the client `alice` of the same issuer have different keys).
 */
export function principalKey(principal: Principal | undefined): string {
  if (principal === undefined) return ''
  return JSON.stringify([principal.issuer ?? null, principal.kind ?? null, principal.subject])
}

/**
 * The scopes `principal` lacks of `required` (all of them without a principal). With a
 * `hierarchy`, a scope the principal holds also grants every scope it implies (see
 * {@link ScopeHierarchy}); without one, only the scopes it names.
 */
export function missingScopes(principal: Principal | undefined, required: readonly string[], hierarchy?: ScopeHierarchy): string[] {
  if (required.length === 0) return []
  if (principal === undefined) return [...required]
  const granted = new Set(hierarchy === undefined ? principal.scopes : impliedScopes(principal.scopes, hierarchy))
  return required.filter(scope => !granted.has(scope))
}

/**
 * Which narrower scopes a broader scope implies (MCP 2026-07-28 authorization: a server MUST
 * account for scope hierarchies when deciding whether a token suffices): each key grants the
 * scopes it lists, and through them what those list, e.g.
 * `{ admin: ['files:write'], 'files:write': ['files:read'] }` (admin grants all three).
 */
export type ScopeHierarchy = Readonly<Record<string, readonly string[]>>

/**
 * `granted` and every scope it implies under `hierarchy`, transitively, each once, the granted
 * ones first. A cycle (`a` implies `b` implies `a`) ends where it began. Only the hierarchy's own
 * keys count: a scope named `constructor` implies nothing.
 */
export function impliedScopes(granted: readonly string[], hierarchy: ScopeHierarchy): string[] {
  const result = new Set(granted)
  // The set grows while it is walked: each scope added is visited once, in turn.
  for (const scope of result) {
    if (!Object.hasOwn(hierarchy, scope)) continue
    for (const implied of hierarchy[scope]!) result.add(implied)
  }
  return [...result]
}

/**
 * `principal` with the scopes its own imply under `hierarchy` added to `scopes` (the same object
 * when they add nothing): what an authenticator hands on, so every later check, and a handler
 * reading `ctx.principal.scopes`, sees what the token grants.
 */
export function withImpliedScopes(principal: Principal, hierarchy: ScopeHierarchy | undefined): Principal {
  if (hierarchy === undefined) return principal
  const scopes = impliedScopes(principal.scopes, hierarchy)
  return scopes.length === principal.scopes.length ? principal : { ...principal, scopes }
}

/**
 * Scopes per operation: keys are a method (`'tools/call'`) or a method and the name it acts on
 * (`'tools/call:delete_file'`, `'prompts/get:review'`, `'resources/read:file:///etc/hosts'`).
 */
export type ScopeRules = Readonly<Record<string, readonly string[]>>

/**
 * The scopes `rules` ask for one JSON-RPC message: those of its method and of its method and
 * target (tool or prompt name, resource URI, task id).
 */
export function operationScopes(rules: ScopeRules, message: unknown): readonly string[] {
  if (typeof message !== 'object' || message === null) return []
  const { method, params } = message as { method?: unknown; params?: unknown }
  if (typeof method !== 'string') return []
  // Own keys only: a method named `constructor` or `__proto__` must not read Object.prototype.
  const byMethod = Object.hasOwn(rules, method) ? rules[method]! : []
  const target = targetOf(params)
  const key = `${method}:${target}`
  const byTarget = target === undefined || !Object.hasOwn(rules, key) ? undefined : rules[key]!
  return byTarget === undefined ? byMethod : [...byMethod, ...byTarget]
}

/** The name a request acts on: a tool's or prompt's name, a resource's URI. */
export function targetOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null) return undefined
  const { name, uri } = params as { name?: unknown; uri?: unknown }
  return typeof name === 'string' ? name : typeof uri === 'string' ? uri : undefined
}

/** The parts of an HTTP request an authenticator reads. */
export interface AuthRequest {
  readonly method: string
  readonly pathname: string
  /** A header, case-insensitive name; null when absent. */
  header(name: string): string | null
}

/** An answer an authenticator gives instead of the server: a refusal, or a metadata document. */
export interface AuthAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * An authenticator's refusal of an inbound message: the HTTP answer (403 `insufficient_scope`
 * with its challenge, say), and optionally the JSON-RPC error a message transport answers each
 * refused request with instead. Without `error`, {@link authorizeMessage} makes one from the answer.
 */
export interface AuthRefusal extends AuthAnswer {
  /** The JSON-RPC error object of the refusal, sent with each refused request's id on a message transport (WebSocket). */
  readonly error?: JsonRpcErrorObject
}

/** What an authenticator decides about a request: who made it, or how to refuse it. */
export type AuthOutcome =
  | { readonly type: 'allow'; readonly principal: Principal }
  | { readonly type: 'refuse'; readonly answer: AuthAnswer }

/**
 * The hook the HTTP and WebSocket listeners call (their `auth` option). `bearerAuth` from
 * `rxmcp/auth` makes one (RFC 6750 bearer tokens, RFC 9728 metadata); any object of this shape
 * works, for API keys or mTLS identities, say.
 */
export interface Authenticator {
  /**
   * A document this authenticator serves itself (the Protected Resource Metadata at its well-known
   * paths), or undefined for every other request. Asked before anything else, without credentials.
   */
  serve?(request: AuthRequest): AuthAnswer | undefined
  /** Verifies the request's credentials: the principal, or the refusal (401 with a challenge). */
  authenticate(request: AuthRequest): Promise<AuthOutcome>
  /**
   * The refusal of a JSON-RPC `payload` (one message or a batch) whose principal lacks scopes it
   * needs (403 insufficient_scope, naming them for step-up), or undefined to let it through. Asked
   * for every inbound message on every transport, by the rule of {@link authorizeMessage}: each
   * POST once its body is read, each WebSocket message (`request` is then the upgrade request).
   */
  authorize?(principal: Principal, payload: unknown, request: AuthRequest): AuthRefusal | undefined
}

/** What {@link authorizeMessage} decides: let the payload through, or refuse it. */
export type MessageAuthorization =
  | { readonly type: 'allow' }
  /**
   * `answer` is what HTTP answers (its status: 401 or 403); `error` is what a message transport
   * answers each request of the payload with (its id kept), while the connection lives on.
   */
  | { readonly type: 'refuse'; readonly answer: AuthAnswer; readonly error: JsonRpcErrorObject }

/**
 * The one authorization rule of an inbound JSON-RPC payload, the same on every transport that
 * carries a principal (Streamable HTTP and legacy SSE POSTs, each WebSocket message):
 * - without an authenticator or a principal, it is allowed (nothing to check against);
 * - a principal whose token has expired (`expiresAt` at or before `now`) is refused: 401
 *   `invalid_token`, or -31003 with `data.error: 'invalid_token'` on a message transport. HTTP
 *   authenticates every request, so it meets this on a WebSocket, whose token was checked at the
 *   upgrade and may expire while it is open;
 * - otherwise the authenticator's `authorize` decides (scopes per operation): its refusal is
 *   403 `insufficient_scope`, or -31003 with `data: { error: 'insufficient_scope',
 *   requiredScopes, missingScopes }` so the client can step up.
 *
 * @param now the transport's clock, in ms since the epoch
 * @param request the HTTP request the payload came in (a WebSocket's: its upgrade request)
 */
export function authorizeMessage(auth: Authenticator | undefined, principal: Principal | undefined, payload: unknown, now: number, request: AuthRequest): MessageAuthorization {
  if (auth === undefined || principal === undefined) return ALLOW
  if (principal.expiresAt !== undefined && principal.expiresAt * 1000 <= now) return EXPIRED
  const refusal = auth.authorize?.(principal, payload, request)
  if (refusal === undefined) return ALLOW
  return { type: 'refuse', answer: refusal, error: refusal.error ?? refusalError(refusal, principal) }
}

const ALLOW: MessageAuthorization = { type: 'allow' }

const EXPIRED: MessageAuthorization = {
  type: 'refuse',
  answer: {
    status: 401,
    headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token", error_description="The access token expired"' },
    body: JSON.stringify({ error: 'invalid_token', error_description: 'The access token expired' }),
  },
  error: { code: ErrorCode.Forbidden, message: 'Forbidden: the access token expired', data: { error: 'invalid_token' } },
}

/**
 * The JSON-RPC error of an authenticator's refusal that did not give one: -31003 with the OAuth
 * error of its body (RFC 6750 §3.1), and the scopes its challenge names (`requiredScopes`) with
 * those the principal lacks (`missingScopes`).
 */
function refusalError(answer: AuthAnswer, principal: Principal): JsonRpcErrorObject {
  let error = answer.status === 401 ? 'invalid_token' : 'insufficient_scope'
  try {
    const body = JSON.parse(answer.body) as { error?: unknown }
    if (typeof body.error === 'string') error = body.error
  } catch { /* not JSON: the status decides */ }
  const challenge = Object.entries(answer.headers).find(([name]) => name.toLowerCase() === 'www-authenticate')?.[1] ?? ''
  const scope = /\bscope="([^"]*)"/.exec(challenge)?.[1]
  const requiredScopes = scope === undefined ? [] : scope.split(' ').filter(name => name !== '')
  const data = requiredScopes.length === 0 ? { error } : { error, requiredScopes, missingScopes: missingScopes(principal, requiredScopes) }
  return { code: ErrorCode.Forbidden, message: `Forbidden: ${error}`, data }
}
