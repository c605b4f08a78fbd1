/**
 * `rxmcp/auth`: OAuth 2.1 for MCP. The resource server's side (bearer tokens, Protected Resource
 * Metadata, JWT and introspection verifiers) and the client's (see `rxmcp/auth/client`). Loaded
 * only by programs that import it: a server without auth never loads `jose` or `oauth4webapi`.
 */
export { bearerAuth, bearerToken, InvalidTokenError, BEARER_AUTH_DEFAULTS } from './server.ts'
export type { BearerAuthOptions, TokenVerifier, VerifyContext } from './server.ts'
export { jwtVerifier, introspectionVerifier, principalFromClaims, JWT_VERIFIER_DEFAULTS } from './verifiers.ts'
export type { JwtVerifierOptions, IntrospectionVerifierOptions } from './verifiers.ts'
export { DPOP_DEFAULTS } from './dpop.ts'
export type { DpopOptions } from './dpop.ts'
export { memoryReplayCache, MEMORY_REPLAY_CACHE_DEFAULTS } from '../lib/replay-cache.ts'
export type { ReplayCache, ReplayVerdict, MemoryReplayCacheOptions } from '../lib/replay-cache.ts'
export { authorizeMessage, impliedScopes, missingScopes, operationScopes, principalKey, PrincipalKind, targetOf, withImpliedScopes } from '../lib/auth.ts'
export type {
  Principal, Authenticator, AuthAnswer, AuthOutcome, AuthRefusal, AuthRequest, MessageAuthorization, ScopeHierarchy, ScopeRules,
} from '../lib/auth.ts'
export { ANONYMOUS_CONTEXT, credentialContext, isAuthorizationContextSource } from '../lib/authorization-context.ts'
export type { AuthorizationContext, AuthorizationContextSource } from '../lib/authorization-context.ts'
