import type * as oauth from 'oauth4webapi'

/**
 * The oauth4webapi request options the client sets: the guarded fetch (auth/client/endpoint-guard.ts),
 * which checks the scheme and address of every URL and bounds every answer; oauth4webapi's own
 * https-only check is then off (`allowInsecureRequests`), as the guard's rule (https, or http to a
 * loopback host) replaces it.
 */
export interface HttpOptions {
  [oauth.customFetch]: (url: string, options: oauth.CustomFetchOptions<string, unknown>) => Promise<Response>
  [oauth.allowInsecureRequests]: boolean
}
