/**
 * Who is calling, as the transports learn it and handlers see it: the types of authorization that
 * every layer shares. No I/O and no crypto here; token verification and the OAuth flows live in
 * `auth/` (the `rxmcp/auth` subpath), loaded only by servers and clients that use them.
 */

/**
 * The authenticated caller of a request: what a verified access token (or a WebSocket upgrade's
 * credentials) says. Handlers read it as `ctx.principal`; it is undefined without authentication.
 */
export interface Principal {
  /** The subject the token was issued for (the `sub` claim): a user, or a client acting for itself. */
  readonly subject: string
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

/**
 * A stable key naming a principal, to bind state (a session, a task, a listen stream, an MRTR
 * request state) to it: issuer and subject; '' without a principal. A refreshed token of the same
 * subject keeps the key; its scopes may differ.
 */
export function principalKey(principal: Principal | undefined): string {
  if (principal === undefined) return ''
  return `${principal.issuer ?? ''}\u0000${principal.subject}`
}

/** The scopes of `required` that `principal` lacks (all of them without a principal). */
export function missingScopes(principal: Principal | undefined, required: readonly string[]): string[] {
  if (required.length === 0) return []
  if (principal === undefined) return [...required]
  const granted = new Set(principal.scopes)
  return required.filter(scope => !granted.has(scope))
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
  const byMethod = rules[method] ?? []
  const target = targetOf(params)
  const byTarget = target === undefined ? undefined : rules[`${method}:${target}`]
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
   * The refusal of a request whose principal lacks scopes it needs for a JSON-RPC `payload` (403
   * insufficient_scope, naming them for step-up), or undefined to let it through. Asked for every
   * POST once the body is read.
   */
  authorize?(principal: Principal, payload: unknown, request: AuthRequest): AuthAnswer | undefined
}
