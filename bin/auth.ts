/**
 * The CLI's side of OAuth for servers reached at a URL: requests go out plainly until a server
 * answers 401; then `rxmcp/auth` is loaded (not before, so commands against open servers pay
 * nothing for it) and the authorization code flow runs with a loopback redirect on 127.0.0.1,
 * printing the URL to open. Tokens are kept in a file only its owner can read (0600).
 */
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { defaultFetch } from '../transports/node-fetch.ts'

/** The CLI's auth flags. */
export interface AuthFlags {
  /** Where tokens are kept (default $XDG_CONFIG_HOME/rxmcp/tokens.json, else ~/.config/rxmcp/tokens.json). */
  tokenStore?: string
  clientId?: string
  /** The client secret (else RXMCP_CLIENT_SECRET). */
  clientSecret?: string
  /** The issuer of the client id and secret (else RXMCP_ISSUER): the one authorization server they are sent to. */
  issuer?: string
  scope?: string
  /** The loopback redirect port (default any free one). */
  redirectPort?: number
  /** Never authorize: a 401 is an error. */
  isDisabled: boolean
}

/** The default token file. */
export function defaultTokenStore(): string {
  return join(process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'rxmcp', 'tokens.json')
}

/** A fetch that authorizes on the first 401 (or at once, when tokens are stored already), and `close` for its listener. */
export function authorizingFetch(flags: AuthFlags): { fetch: typeof fetch; close: () => Promise<void> } {
  // The transports' own exchange (nodeFetch on Node), as a client given no fetch uses.
  const plain = defaultFetch()
  if (flags.isDisabled) return { fetch: plain, close: async () => {} }
  const path = flags.tokenStore ?? defaultTokenStore()
  let authorized: Promise<typeof fetch> | undefined
  let closeListener = async () => {}
  const load = () => authorized ??= (async () => {
    const [{ oauthFetch, fileTokenStore }, { loopbackRedirect }] = await Promise.all([import('../auth/client.ts'), import('../auth/loopback.ts')])
    const loopback = await loopbackRedirect({ port: flags.redirectPort })
    closeListener = loopback.close
    return oauthFetch({
      redirect: loopback.redirect,
      redirectUri: loopback.redirectUri,
      clientId: flags.clientId,
      clientSecret: flags.clientSecret ?? process.env.RXMCP_CLIENT_SECRET,
      issuer: flags.issuer ?? process.env.RXMCP_ISSUER,
      scope: flags.scope,
      clientMetadata: { client_name: 'rxmcp CLI' },
      tokenStore: fileTokenStore(path),
      // A DPoP key would have to be kept beside the tokens for them to outlive this process.
      dpop: false,
      // The MCP requests on the same exchange as before authorizing; token requests on the global fetch.
      requestFetch: plain,
    })
  })()
  if (existsSync(path)) void load().catch(() => {})
  const fetchWithAuth: typeof fetch = async (input, init) => {
    if (authorized !== undefined) return (await authorized)(input, init)
    const response = await plain(input, init)
    if (response.status !== 401) return response
    await response.body?.cancel()
    return (await load())(input, init)
  }
  return { fetch: fetchWithAuth, close: () => closeListener() }
}
