import { AuthorizationError, AuthorizationErrorCode } from './errors.ts'
import { discardBody } from '../../lib/http/discard-body.ts'

/** Protected Resource Metadata (RFC 9728), the fields the client reads. */
export interface ProtectedResourceMetadata {
  resource: string
  authorization_servers?: string[]
  scopes_supported?: string[]
  [field: string]: unknown
}

/** Authorization server metadata (RFC 8414 / OpenID Discovery), the fields the client reads. */
export interface AuthorizationServerMetadata {
  issuer: string
  authorization_endpoint?: string
  token_endpoint?: string
  registration_endpoint?: string
  scopes_supported?: string[]
  code_challenge_methods_supported?: string[]
  token_endpoint_auth_methods_supported?: string[]
  grant_types_supported?: string[]
  authorization_response_iss_parameter_supported?: boolean
  client_id_metadata_document_supported?: boolean
  dpop_signing_alg_values_supported?: string[]
  [field: string]: unknown
}

/** What discovery found for one MCP server. */
export interface Discovery {
  /** The Protected Resource Metadata, undefined when the server has none (MCP 2025-03-26). */
  resourceMetadata: ProtectedResourceMetadata | undefined
  /** The `resource` parameter (RFC 8707): the PRM `resource`, undefined without PRM. */
  resource: string | undefined
  /** The authorization server's metadata, or the 2025-03-26 default endpoints at its origin. */
  server: AuthorizationServerMetadata
  /** False when `server` holds the default endpoints because no metadata document was found. */
  hasMetadata: boolean
}

/**
 * Runs discovery for the MCP server at `serverUrl`, as the MCP authorization spec (2025-11-25)
 * orders it:
 *
 *   PRM:  resource_metadata from WWW-Authenticate, then (none given, or it fails with 4xx)
 *         /.well-known/oauth-protected-resource/<path>, then /.well-known/oauth-protected-resource
 *         (none: MCP 2025-03-26, the server's origin is the authorization server)
 *   AS:   issuer with a path: /.well-known/oauth-authorization-server/<path>,
 *           /.well-known/openid-configuration/<path>, <path>/.well-known/openid-configuration
 *         issuer without: /.well-known/oauth-authorization-server, /.well-known/openid-configuration
 *         (none, and no PRM: MCP 2025-03-26 defaults /authorize, /token, /register at the
 *         issuer's origin; none with PRM: AuthorizationError RequestFailed)
 *
 * `fetchFn` is the OAuth client's guarded fetch (auth/client/endpoint-guard.ts): a URL it refuses
 * fails discovery (no fallback to another URL). Refuses (AuthorizationError) a PRM `resource` that
 * is not the server (ResourceMismatch) and AS metadata whose `issuer` is not the one it was looked
 * up for (IssuerMismatch). With `trustedIssuer` (the issuer the application configured), only that
 * authorization server is used: picked from the PRM's list, or the server's origin without PRM,
 * and its metadata must name it exactly; anything else is refused (UntrustedIssuer) before any
 * request to another authorization server, so the token endpoint is always one the trusted
 * issuer's own metadata names.
 */
export async function discover(serverUrl: URL, resourceMetadataUrl: string | undefined, fetchFn: typeof fetch, trustedIssuer?: string): Promise<Discovery> {
  const resourceMetadata = await fetchResourceMetadata(serverUrl, resourceMetadataUrl, fetchFn)
  if (resourceMetadata !== undefined && !isSameResource(resourceMetadata.resource, serverUrl)) {
    // RFC 9728 §3.3 and MCP: a PRM naming another resource must not be used.
    throw new AuthorizationError(AuthorizationErrorCode.ResourceMismatch, `Protected Resource Metadata names resource ${resourceMetadata.resource}, not the MCP server ${canonicalResource(serverUrl)}`)
  }
  const issuer = chooseIssuer(serverUrl, resourceMetadata, trustedIssuer)
  // MCP 2025-03-26 (no PRM): the metadata at the server's origin names the issuer, nothing to compare it with.
  const metadata = await fetchServerMetadata(issuer, fetchFn, resourceMetadata !== undefined)
  if (metadata === undefined && resourceMetadata !== undefined) {
    // MCP 2025-06-18 on: a server with PRM names an authorization server that MUST publish metadata;
    // the default endpoints are MCP 2025-03-26's alone. Guessing them here would also skip the
    // check of PKCE support (code_challenge_methods_supported) the client MUST make first.
    throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `the authorization server ${issuer} named by the Protected Resource Metadata publishes no metadata`)
  }
  if (trustedIssuer !== undefined && metadata !== undefined && metadata.issuer !== trustedIssuer) {
    throw new AuthorizationError(AuthorizationErrorCode.UntrustedIssuer, `the authorization server metadata names issuer ${metadata.issuer}, not the trusted issuer ${trustedIssuer}`)
  }
  const server = metadata ?? {
    // MCP 2025-03-26 §2.3.3: default endpoints at the authorization base URL.
    issuer: trustedIssuer ?? issuer,
    authorization_endpoint: new URL('/authorize', issuer).href,
    token_endpoint: new URL('/token', issuer).href,
    registration_endpoint: new URL('/register', issuer).href,
  }
  return { resourceMetadata, resource: resourceMetadata?.resource, server, hasMetadata: metadata !== undefined }
}

/**
 * The authorization server to use: the trusted issuer where the PRM lists it (or, without PRM, where
 * it is the server's origin), else the PRM's first one, else (MCP 2025-03-26) the server's origin.
 */
function chooseIssuer(serverUrl: URL, resourceMetadata: ProtectedResourceMetadata | undefined, trustedIssuer: string | undefined): string {
  const listed = resourceMetadata === undefined ? undefined : (resourceMetadata.authorization_servers ?? []).filter(entry => typeof entry === 'string')
  if (trustedIssuer === undefined) return listed?.[0] ?? serverUrl.origin
  if (listed === undefined) {
    // MCP 2025-03-26: the server's origin is the authorization server (its metadata must then name the trusted issuer).
    if (new URL(trustedIssuer).href === new URL(serverUrl.origin).href) return serverUrl.origin
  } else if (listed.includes(trustedIssuer)) {
    // RFC 9728 lets the client choose among the listed servers: the one its credentials are from.
    return trustedIssuer
  }
  const named = listed === undefined ? `${serverUrl.origin} (no Protected Resource Metadata)` : listed.length === 0 ? 'no authorization server' : listed.join(', ')
  throw new AuthorizationError(AuthorizationErrorCode.UntrustedIssuer, `${canonicalResource(serverUrl)} names ${named} as its authorization server, not the trusted issuer ${trustedIssuer}`)
}

/** The canonical URI of an MCP server (RFC 8707 / MCP): no fragment, and no trailing slash after an empty path. */
export function canonicalResource(url: URL): string {
  const copy = new URL(url)
  copy.hash = ''
  return copy.pathname === '/' && copy.search === '' ? copy.origin : copy.href
}

/**
 * Whether a PRM `resource` names the MCP server: the same origin, and a path equal to the
 * server's or a parent of it (a resource may cover several endpoints below it).
 */
function isSameResource(resource: string, serverUrl: URL): boolean {
  let url: URL
  try { url = new URL(resource) } catch { return false }
  if (url.origin !== serverUrl.origin) return false
  const parent = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`
  return serverUrl.pathname === url.pathname || serverUrl.pathname.startsWith(parent)
}

async function fetchResourceMetadata(serverUrl: URL, fromHeader: string | undefined, fetchFn: typeof fetch): Promise<ProtectedResourceMetadata | undefined> {
  // The URL the server named comes first; the well-known ones stay as fallbacks if it fails.
  const candidates = [
    ...(fromHeader === undefined ? [] : [new URL(fromHeader, serverUrl)]),
    ...wellKnown(serverUrl, ['oauth-protected-resource'], false),
  ]
  for (const url of candidates) {
    const body = await fetchJson(url, fetchFn)
    if (body === undefined) continue
    if (typeof body.resource !== 'string') throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `Protected Resource Metadata at ${url.href} has no resource`)
    return body as ProtectedResourceMetadata
  }
  return undefined
}

async function fetchServerMetadata(issuer: string, fetchFn: typeof fetch, isIssuerKnown: boolean): Promise<AuthorizationServerMetadata | undefined> {
  const issuerUrl = new URL(issuer)
  for (const url of wellKnown(issuerUrl, ['oauth-authorization-server', 'openid-configuration'], true)) {
    const body = await fetchJson(url, fetchFn)
    if (body === undefined) continue
    // RFC 8414 §3.3: the issuer must be identical to the one the document was built from.
    if (isIssuerKnown ? body.issuer !== issuer : typeof body.issuer !== 'string') throw new AuthorizationError(AuthorizationErrorCode.IssuerMismatch, `authorization server metadata at ${url.href} names issuer ${String(body.issuer)}, expected ${issuer}`)
    return body as AuthorizationServerMetadata
  }
  return undefined
}

/**
 * The well-known URLs to try, in order. For a URL with a path, each suffix is inserted between the
 * host and the path, then (RFC 8414) placed at the root; `isOidcAppend` adds OpenID's
 * `<path>/.well-known/openid-configuration` after `/.well-known/openid-configuration/<path>`.
 */
function wellKnown(base: URL, suffixes: string[], isOidcAppend: boolean): URL[] {
  const path = base.pathname.replace(/\/$/, '')
  if (path === '') return suffixes.map(suffix => new URL(`/.well-known/${suffix}`, base.origin))
  const urls: URL[] = []
  for (const suffix of suffixes) {
    urls.push(new URL(`/.well-known/${suffix}${path}`, base.origin))
    if (suffix === 'openid-configuration' && isOidcAppend) urls.push(new URL(`${path}/.well-known/openid-configuration`, base.origin))
  }
  // PRM falls back to the root; RFC 8414 issuers with a path do not.
  if (!isOidcAppend) for (const suffix of suffixes) urls.push(new URL(`/.well-known/${suffix}`, base.origin))
  return urls
}

/** GETs a JSON document; undefined for a 4xx answer (try the next URL), an error for anything else wrong. */
async function fetchJson(url: URL, fetchFn: typeof fetch): Promise<Record<string, unknown> | undefined> {
  let response: Response
  try {
    response = await fetchFn(url, { headers: { accept: 'application/json' } })
  } catch (cause) {
    // A refused endpoint is a refusal, not a failed request.
    if (cause instanceof AuthorizationError) throw cause
    throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `cannot fetch ${url.href}`, { cause })
  }
  if (response.status >= 400 && response.status < 500) { discardBody(response); return undefined }
  if (!response.ok) { discardBody(response); throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `${url.href} answered ${response.status}`) }
  const body = await response.json().catch(() => undefined) as unknown
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `${url.href} is not a JSON object`)
  return body as Record<string, unknown>
}
