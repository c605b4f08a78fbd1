import { AuthorizationError, AuthorizationErrorCode, safeCause } from './errors.ts'
import type { Discovery } from './discovery.ts'

/** The JWT bearer grant type (RFC 7523), which takes the ID-JAG as its assertion. */
export const JWT_BEARER_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer'

/** A grant the client runs itself from parameters it is given (an assertion grant, say). */
export interface ExtensionGrant {
  /** The grant_type, such as `urn:ietf:params:oauth:grant-type:jwt-bearer`. */
  type: string
  /** The token request parameters besides grant_type (an `assertion`, say); called per token request with what discovery found and the fetch to use. */
  parameters: (discovery: Discovery, fetchFn: typeof fetch) => Record<string, string> | Promise<Record<string, string>>
}

/** Options of {@link enterpriseGrant}. */
export interface EnterpriseGrantOptions {
  /** The enterprise identity provider's token endpoint. */
  idpTokenEndpoint: string
  /** The client id at the identity provider. */
  idpClientId: string
  /** The user's ID token from the identity provider (called for each exchange, so it can be renewed). */
  idToken: () => string | Promise<string>
  /** The client secret at the identity provider, when it wants one (sent in the body). */
  idpClientSecret?: string
}

/**
 * Enterprise-managed authorization (SEP-990, the Identity Assertion JWT Authorization Grant): the
 * user's ID token is exchanged at the enterprise IdP (RFC 8693) for an ID-JAG naming the MCP
 * authorization server (`audience`) and the MCP server (`resource`), which the client then
 * presents to the authorization server in a JWT bearer grant (RFC 7523). No browser is involved.
 *
 *   client ── token-exchange (id_token → id-jag, audience = issuer, resource) ──> IdP
 *   client ── jwt-bearer (assertion = id-jag) + client auth ─────────────────────> MCP AS
 *
 * Errors with AuthorizationError RequestFailed when the IdP refuses the exchange or its answer
 * fails (too big, too slow: see oauthFetch's maxResponseBytes and requestTimeoutMs), and
 * EndpointRefused when `idpTokenEndpoint` breaks oauthFetch's endpoint rules (allowPrivateNetwork
 * for an IdP on an internal address).
 * @example
 * oauthFetch({ grant: enterpriseGrant({ idpTokenEndpoint, idpClientId, idToken: () => session.idToken }), clientId, clientSecret, issuer })
 */
export function enterpriseGrant(options: EnterpriseGrantOptions): ExtensionGrant {
  return {
    type: JWT_BEARER_GRANT_TYPE,
    parameters: async (discovery, fetchFn) => {
      const body = new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
        audience: discovery.server.issuer,
        subject_token: await options.idToken(),
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        client_id: options.idpClientId,
      })
      if (discovery.resource !== undefined) body.set('resource', discovery.resource)
      if (options.idpClientSecret !== undefined) body.set('client_secret', options.idpClientSecret)
      let response: Response
      try {
        // oauthFetch hands its guarded fetch: the IdP's answer is checked, capped and timed like the others.
        response = await fetchFn(options.idpTokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body })
      } catch (cause) {
        if (cause instanceof AuthorizationError) throw cause
        throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, 'the token exchange at the identity provider failed', { cause: safeCause(cause) })
      }
      const answer = await response.json().catch(() => undefined) as { access_token?: unknown; error?: unknown } | undefined
      if (!response.ok || typeof answer?.access_token !== 'string') {
        throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `the identity provider refused the token exchange (${response.status}${typeof answer?.error === 'string' ? ` ${answer.error}` : ''})`)
      }
      return { assertion: answer.access_token }
    },
  }
}
