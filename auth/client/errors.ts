/**
 * Codes of {@link AuthorizationError}: why the OAuth client refused to go on.
 */
export const AuthorizationErrorCode = {
  /** The authorization server metadata names another `issuer` than the one it was fetched for (RFC 8414 §3.3). */
  IssuerMismatch: 'RXMCP_ERR_AUTH_ISSUER_MISMATCH',
  /** The Protected Resource Metadata names a `resource` that is not the MCP server (RFC 9728 §3.3). */
  ResourceMismatch: 'RXMCP_ERR_AUTH_RESOURCE_MISMATCH',
  /** The authorization response carried another `state` than the one sent, or none. */
  StateMismatch: 'RXMCP_ERR_AUTH_STATE_MISMATCH',
  /** The authorization response's `iss` is wrong, or missing where the server promised it (RFC 9207). */
  IssMismatch: 'RXMCP_ERR_AUTH_ISS_MISMATCH',
  /** The same request needed more authorizations than allowed (a step-up loop on 403 insufficient_scope). */
  TooManyAttempts: 'RXMCP_ERR_AUTH_TOO_MANY_ATTEMPTS',
  /** The authorization server does not support PKCE with S256. */
  PkceUnsupported: 'RXMCP_ERR_AUTH_PKCE_UNSUPPORTED',
  /** Authorization needs a user (the authorization code grant) and no `redirect` hook was given. */
  InteractionRequired: 'RXMCP_ERR_AUTH_INTERACTION_REQUIRED',
  /** The authorization server answered the authorization request with an error (`access_denied`, say). */
  Denied: 'RXMCP_ERR_AUTH_DENIED',
  /** No way to get a client id: no pre-registration, no metadata document, no registration endpoint. */
  RegistrationUnavailable: 'RXMCP_ERR_AUTH_REGISTRATION_UNAVAILABLE',
  /** A discovery, registration or token request failed (its cause says how: a TimeoutError or FrameTooLargeError for an answer too slow or too big). */
  RequestFailed: 'RXMCP_ERR_AUTH_REQUEST_FAILED',
  /** The MCP server names an authorization server other than the `issuer` the client was given: nothing (no credentials) is sent to it. */
  UntrustedIssuer: 'RXMCP_ERR_AUTH_UNTRUSTED_ISSUER',
  /**
   * A metadata, registration, token or authorization URL was refused before any request: not
   * https outside loopback, or a host on a private, link-local or special address (or loopback
   * while the MCP server is not), unless `allowPrivateNetwork` / `allowInsecureRequests` allow it.
   */
  EndpointRefused: 'RXMCP_ERR_AUTH_ENDPOINT_REFUSED',
} as const

/** One of the {@link AuthorizationErrorCode} values. */
export type AuthorizationErrorCode = (typeof AuthorizationErrorCode)[keyof typeof AuthorizationErrorCode]

/**
 * A local error: the OAuth client refused a step of discovery, registration or authorization.
 *
 * It never crosses the wire. Messages never hold tokens, codes or client secrets; `cause` keeps
 * the underlying error (an oauth4webapi one for a failed token request, say).
 * @example
 * try { await client.tools() } catch (error) {
 *   if (error instanceof AuthorizationError && error.code === AuthorizationErrorCode.IssuerMismatch) …
 * }
 */
export class AuthorizationError extends Error {
  override name = 'AuthorizationError'
  readonly code: AuthorizationErrorCode

  constructor(code: AuthorizationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
}

/**
 * An error fit to keep as a `cause`: its name, message and code only. oauth4webapi errors carry the
 * response body they choked on in their own `cause`, and a token response's body holds tokens.
 */
export function safeCause(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error))
  const safe = new Error(error.message)
  safe.name = error.name
  const { code, error: oauthError, status } = error as { code?: unknown; error?: unknown; status?: unknown }
  Object.assign(safe, {
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof oauthError === 'string' ? { error: oauthError } : {}),
    ...(typeof status === 'number' ? { status } : {}),
  })
  return safe
}
