import type { Observable } from '../lib/rx.ts'
import type { Inbound, SendOptions, Transport } from '../lib/transport.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { TransportError } from '../lib/jsonrpc/errors.ts'
import { ANONYMOUS_CONTEXT, credentialContext, isAuthorizationContextSource, type AuthorizationContext } from '../lib/authorization-context.ts'
import { HTTP_CLIENT_DEFAULTS, type HttpClientOptions } from './http-client-options.ts'
import { HttpClientCore } from './http-client-core.ts'
import { post } from './http-client-post.ts'
import { cancelledRequestOf, modernRequestOf, postModern } from './http-client-modern.ts'
import { openLegacy, postLegacy } from './http-client-legacy.ts'
import { abortAfter } from './http-client-retry.ts'
import { discardBody } from '../lib/http/discard-body.ts'

// The parts of the transport live in files of their own (http-client-*.ts); this one is its face.
export { HTTP_CLIENT_DEFAULTS }
export type { HttpClientOptions }
export { nodeFetch } from './node-fetch.ts'

/** A client transport over HTTP that knows the session it is in. */
export interface HttpClientTransport extends Transport {
  /** The session id the server gave, once initialized (Streamable HTTP). */
  readonly sessionId: string | undefined
  /** Which transport is in use: decided by the first request for {@link httpClient}. */
  readonly mode: 'streamable-http' | 'sse' | undefined
}

/**
 * The Streamable HTTP client transport (MCP 2025-03-26 onward).
 *
 * Each message is POSTed with `Accept: application/json, text/event-stream` and the extra headers
 * its send options give (`SendOptions.headers`); a JSON answer is read whole, an SSE answer event
 * by event. The session id from initialize goes on every later request, with MCP-Protocol-Version
 * once a message's send options name the negotiated version (`SendOptions.protocolVersion`: the
 * client passes it from the initialize answer on). After initialize it opens the GET stream when
 * the server offers one. Each frame it hands on names the transport (`requestInfo.transport`:
 * `'streamable-http'`, or `'sse'` for the legacy HTTP+SSE one). A dropped SSE stream is resumed with `Last-Event-ID`, waiting the server's `retry`
 * or an exponential backoff with a cap. `close()` DELETEs the session.
 *
 * A modern request (MCP 2026-07-28: its `_meta` names a protocol version) is one POST of its own,
 * outside any session: no Mcp-Session-Id (one the server sends back is ignored), no GET stream, no
 * resumption (a response stream that ends before its response fails the request with
 * `TransportError`). Its standard headers are read from the message itself: `MCP-Protocol-Version`
 * (the `_meta` version), `Mcp-Method`, and `Mcp-Name` (the tool or prompt name, the resource URI;
 * base64-sentinel encoded when not plain ASCII); the message's send options add the client's
 * `Mcp-Param-*` headers.
 * A `notifications/cancelled` for a modern request in flight is not POSTed: closing that
 * request's response stream is the cancellation on HTTP.
 *
 * A 401, or a 403 `insufficient_scope`, fails the request with {@link UnauthorizedError} (a
 * TransportError carrying the status, the parsed `WWW-Authenticate` challenge and the resource
 * metadata URL it names); pass `oauthFetch` of `rxmcp/auth/client` as `fetch` to authorize instead.
 *
 * @example
 * const client = await connect(streamableHttpClient('http://127.0.0.1:3000/mcp'), { name: 'me', version: '1' })
 */
export function streamableHttpClient(url: string | URL, options: HttpClientOptions = {}): HttpClientTransport {
  return new HttpClient(new URL(url), options, 'streamable-http')
}

/** The legacy HTTP+SSE client transport (MCP 2024-11-05): GET the SSE stream, POST to the endpoint it names. */
export function sseClient(url: string | URL, options: HttpClientOptions = {}): HttpClientTransport {
  return new HttpClient(new URL(url), options, 'sse')
}

/**
 * Streamable HTTP first, legacy HTTP+SSE when the server refuses the initialize POST with 400, 404
 * or 405, as the MCP backwards-compatibility section describes. For the legacy fallback, `sseUrl`
 * (default: the same URL) is where the SSE stream is opened.
 */
export function httpClient(url: string | URL, options: HttpClientOptions & { sseUrl?: string | URL } = {}): HttpClientTransport {
  return new HttpClient(new URL(url), options, undefined, options.sseUrl === undefined ? undefined : new URL(options.sseUrl))
}

/** The transport users get: each call goes to the part of the client that handles it, over one shared state. */
class HttpClient implements HttpClientTransport {
  readonly kind = 'http'
  readonly inbound: Observable<Inbound>
  readonly #core: HttpClientCore

  constructor(url: URL, options: HttpClientOptions, mode: 'streamable-http' | 'sse' | undefined, sseUrl?: URL) {
    const core = new HttpClientCore(url, options, mode, sseUrl)
    this.#core = core
    this.inbound = core.incoming.asObservable()
    if (mode === 'sse') core.endpoint = openLegacy(core, url)
  }

  get sessionId(): string | undefined { return this.#core.sessionId }
  /** The server's URL (see Transport.url). */
  get url(): string { return this.#core.url.href }

  /**
   * The authorization context of the next request (MCP 2026-07-28 caching: the client keeps a
   * `private` result for that context alone): the `fetch`'s own name for it when it gives one (an
   * `oauthFetch` names the token it holds for this server), else the Authorization header of
   * `headers`. Null (unknown: nothing private is cached) for a `fetch` of the application's that
   * names none, since it may add a credential of its own.
   */
  async authorizationContext(): Promise<AuthorizationContext> {
    const fetchFn = this.#core.options.fetch
    const configured = await credentialContext(new Headers(this.#core.options.headers).get('authorization'))
    if (fetchFn === undefined) return configured
    if (!isAuthorizationContextSource(fetchFn)) return null
    const named = await fetchFn.authorizationContext(this.#core.url)
    // The fetch holds no credential for this server yet: the configured header is what goes out.
    return named === ANONYMOUS_CONTEXT ? configured : named
  }
  get mode(): 'streamable-http' | 'sse' | undefined { return this.#core.mode }

  send(payload: JsonRpcPayload, options?: SendOptions): Promise<void> {
    const core = this.#core
    if (core.isClosed) return Promise.reject(new TransportError('The HTTP transport is closed'))
    // The negotiated version, kept for this POST and the session's later GET and DELETE.
    const version = options?.protocolVersion
    if (version !== undefined) core.protocolVersion = version
    const headers = options?.headers
    const cancelled = cancelledRequestOf(payload)
    const inFlight = cancelled === undefined ? undefined : core.modernInFlight.get(cancelled)
    if (inFlight !== undefined) {
      // MCP 2026-07-28 Streamable HTTP: closing the response stream is the cancellation, no notification.
      inFlight.abort()
      return Promise.resolve()
    }
    if (core.mode !== 'sse') {
      const modern = modernRequestOf(payload)
      if (modern !== undefined) return postModern(core, payload, modern, headers)
    }
    return core.mode === 'sse' ? postLegacy(core, payload, headers) : post(core, payload, headers)
  }

  async close(): Promise<void> {
    const core = this.#core
    if (core.isClosed) return
    const sessionId = core.sessionId
    core.isClosed = true
    core.abort.abort()
    core.incoming.complete()
    if (core.mode === 'streamable-http' && sessionId !== undefined) {
      // Tell the server the session is over; a server that does not allow DELETE answers 405, which is fine.
      // Bounded (2 s on the scheduler's clock): a server that never answers does not hold close.
      const deadline = abortAfter(2000, core.options.scheduler)
      try {
        const response = await core.fetch(core.url, { method: 'DELETE', headers: core.headers({}), signal: deadline.signal })
        discardBody(response)
      } catch { /* the server is gone already */ } finally { deadline.release() }
    }
  }
}
