/**
 * Built-in token verifiers for `bearerAuth`: signed JWT access tokens (RFC 9068) checked against a
 * key set with `jose`, and opaque tokens asked about at an RFC 7662 introspection endpoint.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose'
import type { Principal, PrincipalKind } from '../lib/auth.ts'
import { InvalidTokenError, type TokenVerifier } from './server.ts'

/** Options of {@link jwtVerifier}. */
export interface JwtVerifierOptions {
  /** The issuer tokens must name (`iss`), exactly. */
  issuer: string
  /**
   * Where the issuer publishes its keys: fetched on first use, again when the set is older than
   * `jwksMaxAgeMs`, and again when a token names a key the set lacks (a rotation), unless the last
   * fetch is under `jwksCooldownMs` old. Each verifier (so each instance) keeps its own copy.
   */
  jwksUrl?: string | URL
  /**
   * With `jwksUrl`: the least time between two fetches caused by tokens naming an unknown key, in ms
   * (default 30,000, jose's `cooldownDuration`). Such a token arriving within it is refused (401),
   * so right after a rotation a token signed with the new key is refused by an instance that
   * fetched the set less than this long ago; the bound keeps tokens naming made-up keys from
   * making every request a fetch at the authorization server. 0 fetches on every unknown key.
   */
  jwksCooldownMs?: number
  /**
   * With `jwksUrl`: the age past which the set is fetched again before a token is checked, in ms
   * (default 600,000, jose's `cacheMaxAge`): the longest a withdrawn key still verifies tokens on an
   * instance that sees no token naming a new key.
   */
  jwksMaxAgeMs?: number
  /** The keys themselves, instead of `jwksUrl`. */
  jwks?: JSONWebKeySet
  /**
   * The audience tokens must name (`aud`); default: the server's resource URL (RFC 8707), so a token
   * issued for another server is refused. Several: any of them.
   */
  audience?: string | readonly string[]
  /** Signature algorithms accepted (default RS256, PS256, ES256, ES384, EdDSA; never `none`). */
  algorithms?: readonly string[]
  /** Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds (default 30). */
  clockToleranceSec?: number
  /** The time to check expiry against (default now). */
  currentDate?: () => Date
}

/** Defaults of {@link JwtVerifierOptions}: jose's own for the remote key set, written down so they are ours. */
export const JWT_VERIFIER_DEFAULTS = { jwksCooldownMs: 30_000, jwksMaxAgeMs: 600_000 } as const

const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA']

/**
 * A verifier for JWT access tokens: signature (by a key of the issuer's set), issuer, audience,
 * expiry and not-before with clock skew. The principal's scopes come from `scope` (space-separated)
 * or `scp` (a list); its subject from `sub`, else the client id for client-credentials tokens.
 */
export function jwtVerifier(options: JwtVerifierOptions): TokenVerifier {
  let keys: JWTVerifyGetKey
  if (options.jwks !== undefined) keys = createLocalJWKSet(options.jwks)
  else if (options.jwksUrl !== undefined) {
    keys = createRemoteJWKSet(new URL(options.jwksUrl), {
      cooldownDuration: options.jwksCooldownMs ?? JWT_VERIFIER_DEFAULTS.jwksCooldownMs,
      cacheMaxAge: options.jwksMaxAgeMs ?? JWT_VERIFIER_DEFAULTS.jwksMaxAgeMs,
    })
  }
  else throw new TypeError('jwtVerifier needs jwksUrl or jwks')
  const algorithms = [...(options.algorithms ?? DEFAULT_ALGORITHMS)].filter(alg => alg !== 'none')
  return async (token, context) => {
    let payload: JWTPayload
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience === undefined ? context.resource : [...[options.audience].flat()],
        algorithms,
        clockTolerance: options.clockToleranceSec ?? 30,
        requiredClaims: ['exp'],
        currentDate: options.currentDate?.(),
      }))
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new InvalidTokenError('expired', 'expired', { cause: error })
      if (error instanceof joseErrors.JOSEError && !(error instanceof joseErrors.JWKSTimeout)) throw new InvalidTokenError(error.code, 'invalid', { cause: error })
      if (error instanceof TypeError && /JWS|JWT|Compact/i.test(error.message)) throw new InvalidTokenError('malformed', 'invalid', { cause: error })
      throw error
    }
    return principalFromClaims(payload as Record<string, unknown>)
  }
}

/** Options of {@link introspectionVerifier}. */
export interface IntrospectionVerifierOptions {
  /** The authorization server's introspection endpoint (RFC 7662). */
  endpoint: string | URL
  /** This server's credentials at the authorization server (client_secret_basic). */
  clientId: string
  clientSecret: string
  /**
   * The audience an active token must name, when the answer has `aud`; default: the server's
   * resource URL. An answer without `aud` is taken as the authorization server vouching for it.
   */
  audience?: string | readonly string[]
  /** The issuer an answer's `iss` must be, when it has one. */
  issuer?: string
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch
  /** Ms before the endpoint counts as unreachable (default 5,000). */
  timeoutMs?: number
}

/**
 * A verifier for opaque tokens: asks the authorization server's introspection endpoint. Inactive
 * tokens, wrong audience or issuer, and expired ones are refused; an unreachable endpoint is not
 * a refusal (503, see TokenVerifier). Combined with bearerAuth's cache, each token is asked about
 * once until it expires.
 */
export function introspectionVerifier(options: IntrospectionVerifierOptions): TokenVerifier {
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const credentials = btoa(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`)
  return async (token, context) => {
    const response = await doFetch(String(options.endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${credentials}` },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
    })
    if (!response.ok) throw new Error(`introspection endpoint answered ${response.status}`)
    const answer = await response.json() as Record<string, unknown>
    if (answer.active !== true) throw new InvalidTokenError('inactive')
    const audiences = options.audience === undefined ? [context.resource] : [options.audience].flat()
    if (answer.aud !== undefined) {
      const named = [answer.aud].flat()
      if (!named.some(aud => audiences.includes(aud as string))) throw new InvalidTokenError('audience')
    }
    if (options.issuer !== undefined && answer.iss !== undefined && answer.iss !== options.issuer) throw new InvalidTokenError('issuer')
    if (typeof answer.exp === 'number' && answer.exp * 1000 <= Date.now()) throw new InvalidTokenError('expired', 'expired')
    return principalFromClaims(answer)
  }
}

/**
 * The principal a token's claims (or an introspection answer) describe. A token with a `sub` is a
 * `user` principal of that subject; one without is a `client` principal whose subject is its
 * client (`client_id`, else `azp`), as a client-credentials token: the two never share a
 * {@link principalKey}, so a client named like a user cannot take over the user's session, tasks
 * or request states. (RFC 9068 §5 leaves it to the issuer to keep the `sub` it gives a client
 * apart from its users'.)
 */
export function principalFromClaims(claims: Record<string, unknown>): Principal {
  const clientId = typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : undefined
  const hasSub = typeof claims.sub === 'string' && claims.sub !== ''
  const subject = hasSub ? claims.sub as string : clientId
  if (subject === undefined || subject === '') throw new InvalidTokenError('no subject')
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(scope => scope !== '')
    : Array.isArray(claims.scp) ? claims.scp.filter((scope): scope is string => typeof scope === 'string') : []
  const kind: PrincipalKind = hasSub ? 'user' : 'client'
  const principal: { -readonly [K in keyof Principal]: Principal[K] } = { subject, kind, scopes, claims }
  if (clientId !== undefined) principal.clientId = clientId
  if (typeof claims.iss === 'string') principal.issuer = claims.iss
  if (typeof claims.exp === 'number') principal.expiresAt = claims.exp
  return principal
}
