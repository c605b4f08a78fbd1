/**
 * The resource-server side of MCP authorization (OAuth 2.1, MCP 2025-06-18 onward): bearer tokens
 * checked on every request (RFC 6750), the Protected Resource Metadata document that tells clients
 * where to get one (RFC 9728), and step-up by scope. Plug the result into a listener's `auth`.
 *
 * @example
 * const auth = bearerAuth({
 *   resource: 'https://mcp.example.com/mcp',
 *   authorizationServers: ['https://login.example.com'],
 *   verify: jwtVerifier({ issuer: 'https://login.example.com', jwksUrl: 'https://login.example.com/jwks' }),
 *   scopes: { 'tools/call:delete_file': ['files:write'] },
 * })
 * await server.listen(streamableHttp({ port: 3000, auth }))
 */
import { DpopKeyQuotaError, DpopProofError, DpopReplayCacheFullError, DpopVerifier, type DpopOptions } from './dpop.ts'
import { missingScopes, operationScopes, withImpliedScopes, type ScopeHierarchy, type AuthAnswer, type AuthOutcome, type AuthRefusal, type AuthRequest, type Authenticator, type Principal } from '../lib/auth.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'

/** A token that is not (or no longer) valid: answered 401 `invalid_token`. Its message never reaches the client. */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError'
  constructor(message: string, readonly reason: 'expired' | 'invalid' = 'invalid', options?: ErrorOptions) {
    super(message, options)
  }
}

/** What a verifier knows about the request beyond the token. */
export interface VerifyContext {
  /** This server's canonical URL (the `resource` of its metadata): the audience a token must name (RFC 8707). */
  readonly resource: string
}

/**
 * Turns an access token into the principal it stands for, or throws {@link InvalidTokenError}.
 * Any other error means the verifier could not decide (its key set or introspection endpoint is
 * unreachable): the request gets 503, and nothing is cached.
 */
export type TokenVerifier = (token: string, context: VerifyContext) => Promise<Principal>

/** Options of {@link bearerAuth}. */
export interface BearerAuthOptions {
  /** The MCP endpoint's canonical URL, e.g. `https://mcp.example.com/mcp`: the RFC 8707 resource tokens must be issued for. */
  resource: string
  /** The authorization servers' issuer URLs, listed in the metadata. */
  authorizationServers: readonly string[]
  /** Verifies a token: {@link jwtVerifier}, {@link introspectionVerifier}, or your own. */
  verify: TokenVerifier
  /** Scopes listed in the metadata (`scopes_supported`), for clients choosing what to ask for. */
  scopesSupported?: readonly string[]
  /** Scopes every request needs; named in the 401 challenge (default none). */
  requiredScopes?: readonly string[]
  /**
   * Scopes per operation, beyond `requiredScopes`. Keys are a method (`'tools/call'`,
   * `'resources/read'`) or a method and the name it acts on (`'tools/call:delete_file'`,
   * `'prompts/get:review'`, `'resources/read:file:///etc/hosts'`). A request whose token lacks them
   * gets 403 `insufficient_scope` naming them, so the client can step up.
   */
  scopes?: Readonly<Record<string, readonly string[]>>
  /**
   * Which broader scopes imply narrower ones (MCP 2026-07-28: servers MUST account for scope
   * hierarchies when deciding whether a token suffices): `{ 'files:write': ['files:read'] }` lets
   * a token with `files:write` through where `files:read` is needed; implications chain
   * (`{ admin: ['files:write'], 'files:write': ['files:read'] }`). The principal handed on carries
   * the implied scopes too, so `requiredScopes`, `scopes`, `requireScopes` and handlers reading
   * `ctx.principal.scopes` all apply it. Default none: a scope grants only itself.
   */
  scopeHierarchy?: ScopeHierarchy
  /** `resource_name` in the metadata. */
  resourceName?: string
  /** `resource_documentation` in the metadata. */
  resourceDocumentation?: string
  /** Tokens whose verification is remembered until they expire (default 10,000; 0 turns it off). */
  cacheSize?: number
  /** Longest time a verification is remembered, in ms, for tokens without an expiry (default 5 minutes). */
  cacheTtlMs?: number
  /**
   * DPoP-bound tokens (RFC 9449): accepted as `Authorization: DPoP <token>` with a valid proof,
   * and a token bound to a key (`cnf.jkt`) is accepted only so (default on; `false` accepts only
   * Bearer and refuses bound tokens). The metadata lists the proof algorithms. Each proof is
   * remembered until it could no longer be accepted (`replayCache`: this process's memory by
   * default; share a Redis one between instances); one that cannot be remembered gets 503, and
   * one whose key already has its share of the cache remembered (1,000 proofs) gets 429.
   */
  dpop?: boolean | DpopOptions
  /** The clock, in ms (default Date.now). */
  now?: () => number
}

/** Defaults of {@link BearerAuthOptions}. */
export const BEARER_AUTH_DEFAULTS = { cacheSize: 10_000, cacheTtlMs: 5 * 60_000 } as const

const WELL_KNOWN = '/.well-known/oauth-protected-resource'

/**
 * An {@link Authenticator} for OAuth 2.1 bearer tokens:
 * - serves the Protected Resource Metadata at `/.well-known/oauth-protected-resource` followed by
 *   the MCP endpoint's path, and at the root well-known path;
 * - answers a request without a valid token 401 with `WWW-Authenticate: Bearer resource_metadata=...`
 *   (plus `scope` when `requiredScopes` are set, and `error="invalid_token"` for a bad token);
 * - answers a request whose token lacks an operation's scopes 403 `insufficient_scope`, a scope
 *   counting as held when the token has it or one implying it (`scopeHierarchy`);
 * - remembers each verified token until it expires, so a key lookup or an introspection call is
 *   paid once per token, not per request.
 */
export function bearerAuth(options: BearerAuthOptions): Authenticator {
  const resource = new URL(options.resource)
  const resourcePath = resource.pathname === '/' ? '' : resource.pathname.replace(/\/$/, '')
  const metadataUrl = `${resource.origin}${WELL_KNOWN}${resourcePath}`
  const metadataPaths = new Set([`${WELL_KNOWN}${resourcePath}`, WELL_KNOWN])
  const metadata: Record<string, unknown> = {
    resource: options.resource,
    authorization_servers: [...options.authorizationServers],
    bearer_methods_supported: ['header'],
  }
  if (options.scopesSupported !== undefined) metadata.scopes_supported = [...options.scopesSupported]
  if (options.resourceName !== undefined) metadata.resource_name = options.resourceName
  if (options.resourceDocumentation !== undefined) metadata.resource_documentation = options.resourceDocumentation
  const dpop = options.dpop === false ? undefined : new DpopVerifier(options.dpop === true || options.dpop === undefined ? {} : options.dpop, options.now ?? Date.now)
  if (dpop !== undefined) metadata.dpop_signing_alg_values_supported = [...dpop.algorithms]
  const document: AuthAnswer = {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'max-age=3600', 'access-control-allow-origin': '*' },
    body: JSON.stringify(metadata),
  }
  const required = options.requiredScopes ?? []
  const now = options.now ?? Date.now
  const cache = new VerifiedTokens(options.cacheSize ?? BEARER_AUTH_DEFAULTS.cacheSize, options.cacheTtlMs ?? BEARER_AUTH_DEFAULTS.cacheTtlMs)
  const context: VerifyContext = { resource: options.resource }

  const challenge = (status: number, error: string | undefined, description: string | undefined, scopes: readonly string[]): AuthAnswer => {
    const params = [`resource_metadata="${metadataUrl}"`]
    if (scopes.length > 0) params.push(`scope="${scopes.join(' ')}"`)
    if (error !== undefined) params.unshift(`error="${error}"`)
    if (description !== undefined) params.push(`error_description="${description}"`)
    const body = error === undefined ? { error: 'unauthorized', error_description: 'An access token is required' } : { error, error_description: description }
    return { status, headers: { 'content-type': 'application/json', 'www-authenticate': `Bearer ${params.join(', ')}` }, body: JSON.stringify(body) }
  }

  return {
    serve(request: AuthRequest): AuthAnswer | undefined {
      if (request.method !== 'GET' || !metadataPaths.has(request.pathname)) return undefined
      return document
    },

    async authenticate(request: AuthRequest): Promise<AuthOutcome> {
      const authorization = request.header('authorization')
      const isDpop = dpop !== undefined && authorization !== null && /^DPoP\b/i.test(authorization)
      const token = bearerToken(authorization, isDpop ? 'DPoP' : 'Bearer')
      if (token === undefined) return { type: 'refuse', answer: challenge(401, undefined, undefined, required) }
      if (token === null) return { type: 'refuse', answer: challenge(400, 'invalid_request', 'Malformed Authorization header', required) }
      const at = now()
      let principal = cache.get(token, at)
      if (principal === undefined) {
        try {
          // The token's scopes with those they imply: what every check below and after sees.
          principal = withImpliedScopes(await options.verify(token, context), options.scopeHierarchy)
        } catch (error) {
          if (error instanceof InvalidTokenError) {
            const description = error.reason === 'expired' ? 'The access token expired' : 'The access token is invalid'
            return { type: 'refuse', answer: challenge(401, 'invalid_token', description, required) }
          }
          return { type: 'refuse', answer: unavailable('The access token could not be verified now', 5) }
        }
        if (principal.expiresAt !== undefined && principal.expiresAt * 1000 <= at) {
          return { type: 'refuse', answer: challenge(401, 'invalid_token', 'The access token expired', required) }
        }
        cache.set(token, principal, at)
      }
      // A token bound to a key is worth nothing without a proof made with that key, and a proof is
      // made for one request: both are checked on every request, cached token or not.
      const boundTo = (principal.claims?.cnf as { jkt?: unknown } | undefined)?.jkt
      if (isDpop || boundTo !== undefined) {
        const proof = request.header('dpop')
        if (!isDpop || dpop === undefined || proof === null || proof.includes(',')) return { type: 'refuse', answer: challenge(401, 'invalid_token', 'The access token is invalid', required) }
        try {
          await dpop.verify(proof, request.method, `${resource.origin}${request.pathname}`, token, boundTo, at)
        } catch (error) {
          if (error instanceof DpopProofError) return { type: 'refuse', answer: challenge(401, 'invalid_dpop_proof', 'The DPoP proof is invalid', required) }
          // This key's share of the replay cache is used: its client waits, others are served.
          if (error instanceof DpopKeyQuotaError) return { type: 'refuse', answer: tooMany('Too many DPoP proofs of this key are remembered; try again later', Math.max(1, Math.ceil(error.retryAfterMs / 1000))) }
          // A proof that cannot be remembered (the replay cache is full, or its Redis is down) is
          // refused for now: letting it through would let a replay through.
          const seconds = error instanceof DpopReplayCacheFullError ? Math.max(1, Math.ceil(error.retryAfterMs / 1000)) : 5
          return { type: 'refuse', answer: unavailable('The DPoP proof could not be checked for replay now', seconds) }
        }
      }
      const missing = missingScopes(principal, required)
      if (missing.length > 0) return { type: 'refuse', answer: challenge(403, 'insufficient_scope', 'The access token lacks a required scope', required) }
      return { type: 'allow', principal }
    },

    authorize(principal: Principal, payload: unknown): AuthRefusal | undefined {
      const rules = options.scopes
      if (rules === undefined) return undefined
      const needed = new Set<string>()
      for (const message of Array.isArray(payload) ? payload : [payload]) {
        for (const scope of operationScopes(rules, message)) needed.add(scope)
      }
      const missing = missingScopes(principal, [...needed])
      if (missing.length === 0) return undefined
      // Step-up: the challenge names every scope the operation needs, with those of every request;
      // on a message transport the same names travel in the JSON-RPC error's data.
      const requiredScopes = [...new Set([...required, ...needed])]
      return {
        ...challenge(403, 'insufficient_scope', 'The access token lacks a scope this operation needs', requiredScopes),
        error: { code: ErrorCode.Forbidden, message: `Forbidden: the access token lacks scope ${missing.join(' ')}`, data: { error: 'insufficient_scope', requiredScopes, missingScopes: missing } },
      }
    },
  }
}

/** A 429 answer: this client's share is used; try again in `seconds`. */
function tooMany(description: string, seconds: number): AuthAnswer {
  return { status: 429, headers: { 'content-type': 'application/json', 'retry-after': String(seconds) }, body: JSON.stringify({ error: 'too_many_requests', error_description: description }) }
}

/** A 503 answer: the request could not be decided now; try again in `seconds`. */
function unavailable(description: string, seconds: number): AuthAnswer {
  return { status: 503, headers: { 'content-type': 'application/json', 'retry-after': String(seconds) }, body: JSON.stringify({ error: 'temporarily_unavailable', error_description: description }) }
}

/** The token of `Authorization: Bearer <token>` (or of another scheme, `DPoP`): undefined without one, null when malformed. */
export function bearerToken(header: string | null, scheme: 'Bearer' | 'DPoP' = 'Bearer'): string | undefined | null {
  if (header === null) return undefined
  const { token, named } = SCHEMES[scheme]
  const match = token.exec(header)
  return match === null ? (named.test(header) ? null : undefined) : match[1]!
}

/** RFC 6750 §2.1 b64token after the scheme name, and the scheme name alone. */
const SCHEMES = {
  Bearer: { token: /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i, named: /^Bearer\b/i },
  DPoP: { token: /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i, named: /^DPoP\b/i },
} as const

/** Verified tokens, least recently verified first, each until it expires (bounded). */
class VerifiedTokens {
  readonly #entries = new Map<string, { principal: Principal; until: number }>()
  constructor(readonly size: number, readonly ttlMs: number) {}

  get(token: string, now: number): Principal | undefined {
    const entry = this.#entries.get(token)
    if (entry === undefined) return undefined
    if (entry.until > now) return entry.principal
    this.#entries.delete(token)
    return undefined
  }

  set(token: string, principal: Principal, now: number): void {
    if (this.size <= 0) return
    const until = Math.min(now + this.ttlMs, principal.expiresAt === undefined ? Infinity : principal.expiresAt * 1000)
    if (this.#entries.size >= this.size) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(token, { principal, until })
  }
}
