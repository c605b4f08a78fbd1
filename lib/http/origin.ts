/** Host names that count as this machine, for DNS-rebinding protection. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]', '::1']

/** True when `host` (a listener's bind address) is this machine only. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.includes(host)
}

/**
 * Whether a request's `Host` header may reach a listener bound to `boundHost` (DNS-rebinding
 * protection): with `allowed` given, one of those names; else, on a loopback listener, a loopback
 * name; else anything. Names compare without case (RFC 9110), with or without the port. Shared by
 * the HTTP and WebSocket listeners so both refuse the same requests.
 */
export function isAllowedHost(host: string | undefined | null, allowed: readonly string[] | undefined, boundHost: string): boolean {
  if (host === undefined || host === null || (allowed === undefined && !isLoopbackHost(boundHost))) return true
  const value = host.toLowerCase()
  const name = value.replace(/:\d+$/, '')
  const list = allowed ?? LOOPBACK_HOSTS
  return list.some(entry => {
    const lower = entry.toLowerCase()
    return lower === value || lower === name
  })
}

/**
 * Whether a browser `Origin` may reach a local server: one of `allowed` when given (`'*'` for any),
 * otherwise an http(s) origin on a loopback name, any port. Shared by the HTTP and WebSocket
 * listeners so both refuse the same pages.
 */
export function isAllowedOrigin(origin: string, allowed: readonly string[] | undefined): boolean {
  if (allowed !== undefined) return allowed.includes('*') || allowed.includes(origin)
  try {
    const parsed = new URL(origin)
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && LOOPBACK_HOSTS.includes(parsed.hostname)
  } catch {
    return false
  }
}

/**
 * Whether a request comes from a page on another site that sent no Origin: browsers mark every
 * request with `Sec-Fetch-Site`, and a plain GET such as `<img src="http://127.0.0.1:3000/sse">`
 * carries no Origin, so the Origin check alone lets it through. Other clients send neither header.
 */
export function isCrossSiteWithoutOrigin(headers: { origin?: string; 'sec-fetch-site'?: string | string[] }): boolean {
  return headers.origin === undefined && headers['sec-fetch-site'] === 'cross-site'
}

/** The request headers a CORS preflight is always allowed to name (MCP's own, and the auth ones). */
const PREFLIGHT_ALLOWED_HEADERS = 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name'

/**
 * The headers of the answer to a CORS preflight (OPTIONS, 204). `asked` is its
 * Access-Control-Request-Headers: the Mcp-Param-* names a tool defines cannot be listed ahead, so
 * the ones asked for are allowed too.
 */
export function preflightHeaders(asked: string | null): Record<string, string> {
  return {
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    'access-control-allow-headers': asked === null ? PREFLIGHT_ALLOWED_HEADERS : `${PREFLIGHT_ALLOWED_HEADERS}, ${asked}`,
    'access-control-max-age': '600',
  }
}

/** What most requests get: no CORS headers, one frozen object for all (read, never written, by the exchanges). */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>

/**
 * The CORS headers every answer to a request from `origin` carries (opt-in: `corsOrigins`, `'*'`
 * for any): none when CORS is off, the request has no Origin, or its Origin is not listed.
 */
export function corsHeaders(corsOrigins: readonly string[] | undefined, origin: string | undefined): Record<string, string> {
  if (corsOrigins === undefined || origin === undefined) return NO_HEADERS
  if (!corsOrigins.includes('*') && !corsOrigins.includes(origin)) return NO_HEADERS
  return { 'access-control-allow-origin': corsOrigins.includes('*') ? '*' : origin, 'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate', vary: 'origin' }
}
