import { TransportError } from '../lib/jsonrpc/errors.ts'
import { discardBody } from '../lib/http/discard-body.ts'

/** Defaults of {@link sameOriginRedirects}: redirects followed at most for one request. */
export const SAME_ORIGIN_REDIRECTS_DEFAULTS = { maxRedirects: 5 } as const

/** The statuses fetch follows; 303 (and 301/302 for a POST) continue as a GET without a body (Fetch §4.4). */
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * Wraps the HTTP client transport's fetch so that it follows redirects itself, and only within the
 * origin of the request: a request carries the session's `Mcp-Session-Id`, the MCP-Protocol-Version,
 * the caller's own headers (an API key, a DPoP proof) and a JSON-RPC body, and a fetch left to
 * follow a redirect sends all of them to whatever origin the Location names (it drops only
 * `Authorization` and cookies on the way). MCP 2025-11-25: the client MUST handle the session id
 * securely, so nothing of it leaves the server it came from:
 *
 *   request ──> 3xx, Location on the same origin ──> sent again there (307/308 as it was; 301/302/303
 *           │                                        as a GET without body, as fetch does), at most
 *           │                                        `maxRedirects` times, else TransportError
 *           ├─> 3xx, Location on another origin ───> TransportError; nothing is sent there
 *           ├─> 3xx a browser hides (opaqueredirect) ─> TransportError: give the final URL
 *           └─> anything else ─────────────────────> returned as it is
 *
 * Every hop goes through `fetchFn` (an `oauthFetch` authorizes each one for its own resource).
 * A `Request` object as input is sent with `redirect: 'manual'` too, and not followed.
 */
export function sameOriginRedirects(fetchFn: typeof fetch, maxRedirects: number = SAME_ORIGIN_REDIRECTS_DEFAULTS.maxRedirects): typeof fetch {
  return async (input, init) => {
    if (input instanceof Request) return refuseRedirect(await fetchFn(input, { ...init, redirect: 'manual' }), new URL(input.url))
    // A URL object is only read, never changed here: no copy of it per request.
    let url = input instanceof URL ? input : new URL(input)
    let hopInit: RequestInit = { ...init, redirect: 'manual' }
    for (let hops = 0; ; hops++) {
      const response = await fetchFn(url, hopInit)
      if (response.type === 'opaqueredirect' || !REDIRECTS.has(response.status)) return refuseRedirect(response, url)
      const location = response.headers.get('location')
      // A 3xx without a Location is an answer like any other (RFC 9110 §15.4).
      if (location === null) return response
      discardBody(response)
      const target = new URL(location, url)
      if (target.origin !== url.origin) {
        throw new TransportError(`${url.origin} redirected to ${target.origin}, another origin: not followed, so the session id and headers of this server go nowhere else; connect to the final URL`)
      }
      if (hops >= maxRedirects) throw new TransportError(`${url.href} redirected more than ${maxRedirects} times`)
      const method = (hopInit.method ?? 'GET').toUpperCase()
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        hopInit = { ...hopInit, method: method === 'HEAD' ? 'HEAD' : 'GET', body: undefined }
      }
      url = target
    }
  }
}

/** The response, unless it is a redirect a browser hid from us (`redirect: 'manual'` gives an opaque one). */
function refuseRedirect(response: Response, url: URL): Response {
  if (response.type !== 'opaqueredirect') return response
  throw new TransportError(`${url.href} redirected somewhere this runtime does not reveal: not followed; connect to the final URL`)
}
