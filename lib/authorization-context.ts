/**
 * Authorization contexts, as a client's cache tells them apart (MCP 2026-07-28 caching: a
 * `private` result MAY be reused in the authorization context it came in, and caches MUST NOT be
 * shared across authorization contexts: a different access token needs a different cache).
 *
 * A context is named by an opaque string: {@link ANONYMOUS_CONTEXT} for requests that carry no
 * credential, else a digest of the credential (the token, or the Authorization header value), so
 * the name says nothing of the credential and two credentials never share one. A client transport
 * names the context of its requests through `Transport.authorizationContext`.
 */
import { base64url } from './base64url.ts'

/** The context of requests without a credential (stdio, memory, an HTTP server without authorization). */
export const ANONYMOUS_CONTEXT = ''

/**
 * What `Transport.authorizationContext` gives: a context name, or null when the transport cannot
 * tell which credential its requests carry (a `fetch` of the application's that may add one
 * without naming its context): no `private` result is then served or kept.
 */
export type AuthorizationContext = string | null

/**
 * A fetch that names the authorization context of its requests to a URL (`oauthFetch` is one): the
 * Streamable HTTP client transport asks it, and a fetch of the application's that adds credentials
 * may have this method too, so that the client's cache can keep `private` results.
 */
export interface AuthorizationContextSource {
  authorizationContext(url: URL): AuthorizationContext | Promise<AuthorizationContext>
}

/**
 * The context name of a credential: {@link ANONYMOUS_CONTEXT} for none, else `sha256:` and the
 * SHA-256 of the credential in base64url (Web Crypto, in Node and browsers alike).
 */
export async function credentialContext(credential: string | null | undefined): Promise<string> {
  if (credential === undefined || credential === null || credential === '') return ANONYMOUS_CONTEXT
  return `sha256:${base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(credential))))}`
}

/** True when `source` (a fetch, say) names authorization contexts itself. */
export function isAuthorizationContextSource(source: unknown): source is AuthorizationContextSource {
  return typeof (source as Partial<AuthorizationContextSource> | undefined)?.authorizationContext === 'function'
}
