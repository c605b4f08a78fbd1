/**
 * The redirect step of the authorization code grant for programs on the user's machine (RFC 8252
 * §7.3): a one-shot listener on 127.0.0.1 that the authorization server sends the browser back to.
 */
import { timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { AuthorizationError, AuthorizationErrorCode } from './client/errors.ts'
import type { RedirectHook } from './client/grants.ts'

/** Options of {@link loopbackRedirect}. */
export interface LoopbackRedirectOptions {
  /** Port to listen on (default 0: any free one; read `redirectUri`). */
  port?: number
  /** The callback path (default `/callback`). */
  path?: string
  /** Told the URL the user must open (default: printed to stderr). */
  onAuthorizationUrl?: (url: URL) => void
  /** Ms to wait for the user (default 5 minutes). */
  timeoutMs?: number
}

/** DEFAULTS of {@link LoopbackRedirectOptions}. */
export const LOOPBACK_REDIRECT_DEFAULTS = { path: '/callback', timeoutMs: 5 * 60_000 } as const

/** A bound loopback listener: its redirect URI, the hook for `oauthFetch`, and `close()`. */
export interface LoopbackRedirect {
  readonly redirectUri: string
  readonly redirect: RedirectHook
  close(): Promise<void>
}

/**
 * Listens on 127.0.0.1 (never another interface) and returns the redirect hook: it shows the
 * authorization URL, waits for the browser to come back to the callback path, answers it with a
 * short page, and resolves with the callback URL (code, state, iss).
 *
 * Only the callback that carries the `state` of the authorization URL being waited for completes
 * it: any other process on the machine can reach the port, so a callback with another state (or
 * none) is a forgery or a stale tab, answered 400 and ignored, and the hook keeps waiting for the
 * real one. Other paths and methods get 404. Nothing is kept per refused callback, so they are not
 * counted: the wait is bounded by `timeoutMs` alone, after which the authorization fails (failing
 * after some number of bad callbacks would let any local process cancel the user's login).
 */
export async function loopbackRedirect(options: LoopbackRedirectOptions = {}): Promise<LoopbackRedirect> {
  const path = options.path ?? LOOPBACK_REDIRECT_DEFAULTS.path
  /** The authorization being waited for: the state its callback must carry, and how to finish it. */
  let waiting: { state: string | null; resolve: (url: URL) => void } | undefined
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (req.method !== 'GET' || url.pathname !== path || waiting === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found')
      return
    }
    // RFC 6749 §10.12 / RFC 8252 §8.9: the state binds the callback to the request this client made.
    if (waiting.state !== null && !isSameState(url.searchParams.get('state'), waiting.state)) {
      res.writeHead(400, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('This callback does not belong to the authorization in progress.')
      return
    }
    const isError = url.searchParams.has('error')
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(`<!doctype html><title>rxmcp</title><p>${isError ? 'Authorization was not granted.' : 'Authorized.'} You can close this window.</p>`)
    const { resolve } = waiting
    waiting = undefined
    resolve(new URL(`${redirectUri}${url.search}`))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  server.unref()
  const { port } = server.address() as { port: number }
  const redirectUri = `http://127.0.0.1:${port}${path}`
  const show = options.onAuthorizationUrl ?? (url => process.stderr.write(`Open this URL in a browser to authorize:\n  ${url.href}\n`))
  const redirect: RedirectHook = authorizationUrl => new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting = undefined
      reject(new AuthorizationError(AuthorizationErrorCode.Denied, 'no answer from the browser in time'))
    }, options.timeoutMs ?? LOOPBACK_REDIRECT_DEFAULTS.timeoutMs)
    timer.unref()
    // oauthFetch always sends a state; a URL without one (another caller's) takes the first callback.
    waiting = { state: authorizationUrl.searchParams.get('state'), resolve: url => { clearTimeout(timer); resolve(url) } }
    show(authorizationUrl)
  })
  return {
    redirectUri,
    redirect,
    close: () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/** Compares two states in time independent of where they differ (a state is a secret while the flow runs). */
function isSameState(received: string | null, expected: string): boolean {
  if (received === null) return false
  const a = new TextEncoder().encode(received)
  const b = new TextEncoder().encode(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
