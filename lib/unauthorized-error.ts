import { HttpStatusError, LocalErrorCode } from './jsonrpc/errors.ts'
import { authChallenge, type Challenge } from './www-authenticate.ts'

/**
 * An MCP server refused a request for want of authorization: HTTP 401, or 403 with
 * `error="insufficient_scope"` (a step-up). A local error (`RXMCP_ERR_UNAUTHORIZED`) and an
 * {@link HttpStatusError} (so a `TransportError`: code that handles transport failures keeps
 * working); it ends `connect` at once, in every era (never a reason to try the other). It carries what
 * an application needs to start an OAuth flow (MCP authorization, RFC 9728 §5.1): the status, the
 * parsed `WWW-Authenticate` challenge, and the Protected Resource Metadata URL it names.
 *
 * The HTTP client transports fail the request with it when no `fetch` wrapper (such as
 * `oauthFetch` of `rxmcp/auth/client`) answered the challenge first.
 * @example
 * try { await connect(streamableHttpClient(url), info) } catch (error) {
 *   if (error instanceof UnauthorizedError) startLogin(error.resourceMetadataUrl, error.challenge?.params.scope)
 * }
 */
export class UnauthorizedError extends HttpStatusError {
  override name = 'UnauthorizedError'
  override readonly code = LocalErrorCode.Unauthorized
  /** The HTTP status: 401, or 403 for `insufficient_scope`. */
  declare readonly status: number
  /** The challenge of a scheme MCP uses (Bearer or DPoP, else the first), undefined without a `WWW-Authenticate` header. */
  readonly challenge: Challenge | undefined
  /** The challenge's `resource_metadata`, resolved against the request URL; undefined when absent or not a URL. */
  readonly resourceMetadataUrl: URL | undefined

  constructor(message: string, status: number, challenge: Challenge | undefined, resourceMetadataUrl: URL | undefined, options?: { cause?: unknown }) {
    super(message, status, options)
    this.challenge = challenge
    this.resourceMetadataUrl = resourceMetadataUrl
  }

  /**
   * The error for `response` to a request to `url`, when it is a refusal for want of
   * authorization (401, or 403 `insufficient_scope`); undefined for any other answer.
   */
  static fromResponse(response: Response, url: URL | string, method = 'POST'): UnauthorizedError | undefined {
    if (response.status !== 401 && response.status !== 403) return undefined
    const challenge = authChallenge(response.headers.get('www-authenticate'))
    if (response.status === 403 && challenge?.params.error !== 'insufficient_scope') return undefined
    let resourceMetadataUrl: URL | undefined
    try {
      const named = challenge?.params.resource_metadata
      if (named !== undefined) resourceMetadataUrl = new URL(named, url)
    } catch { /* not a URL: left out */ }
    const detail = challenge?.params.error === undefined ? '' : ` (${challenge.params.error})`
    return new UnauthorizedError(`${method} ${url} answered ${response.status}${detail}: authorization required`, response.status, challenge, resourceMetadataUrl)
  }
}
