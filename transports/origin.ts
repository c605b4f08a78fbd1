/** Host names that count as this machine, for DNS-rebinding protection. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]', '::1']

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
