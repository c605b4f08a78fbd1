/**
 * The everything server as a Cloudflare Worker (module syntax), both eras on one endpoint:
 *
 * ```
 *                         ┌─ modern era (2026-07-28), a refusal ── the Worker's own webHandler (stateless)
 * request ── the Worker ──┤
 *                         └─ legacy era: an initialize (fresh id), ── env.SESSIONS.idFromName(id):
 *                            Mcp-Session-Id, GET /sse (fresh id),      one McpSession Durable Object
 *                            POST /messages?sessionId=                 per session, its webHandler
 * ```
 *
 * The modern era needs no session: any isolate serves any request. Its input_required rounds are
 * sealed with `env.REQUEST_STATE_KEY`, so a round one isolate began continues on another, and each
 * `requestState` is marked used in a RequestStateClaim object of its own, so it continues its
 * request once whichever isolate the retry reaches. A legacy session lives in memory in its own
 * Durable Object: every request naming it reaches that object, whichever isolate received it, so
 * the session's state, streams and requests in flight stay in one place. An id no object holds
 * reaches an empty object, which answers 404 as the spec requires.
 *
 * `serve.ts` beside this file bundles it and runs it on workerd; README ("Cloudflare Workers") has
 * the wrangler.toml for deploying it.
 */
import { createEverythingServer } from '../everything/everything.ts'
import type { McpServer, RequestStateStore } from '../../actors/server.ts'
import { webHandler, type WebHandler } from '../../transports/http-handler.ts'
import type { StreamableHttpOptions } from '../../transports/streamable-http-options.ts'
import { randomId } from '../../lib/base64url.ts'
import { decodeJsonFrame } from '../../lib/codec/json.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../../lib/codec/codec.ts'
import { isModernPost } from '../../lib/http/modern-rules.ts'
import { requestsOf } from '../../lib/http/requests.ts'
import type { DurableObjectNamespace, DurableObjectState, DurableObjectStorage, ExecutionContext } from './workers-types.ts'

/** The Worker's bindings (wrangler.toml, or the workerd config serve.ts writes). */
export interface Env {
  /** The McpSession Durable Object namespace: one object per legacy session. */
  SESSIONS: DurableObjectNamespace
  /** The RequestStateClaim Durable Object namespace: one object per modern-era `requestState` retried. */
  REQUEST_STATES: DurableObjectNamespace
  /**
   * The HMAC key sealing modern-era `requestState` (at least 16 bytes of secret; a Worker secret in
   * production): shared by every isolate, so any of them continues a round another began.
   */
  REQUEST_STATE_KEY: string
  /** Host header values to serve, comma-separated (default: the loopback names, for local runs). */
  ALLOWED_HOSTS?: string
}

/**
 * The header the Worker names a session's id in when it forwards a request to the session's
 * Durable Object. It is taken off every request from outside first, so only the Worker sets it.
 */
const SESSION_HEADER = 'x-rxmcp-session'

/** The endpoint and legacy HTTP+SSE paths (the webHandler defaults). */
const MCP_PATH = '/mcp'
const SSE_PATH = '/sse'
const MESSAGES_PATH = '/messages'

/** The options both handlers share: the Host check and the client's address, from the bindings. */
function handlerOptions(env: Env): StreamableHttpOptions {
  const hosts = env.ALLOWED_HOSTS?.split(',').map(host => host.trim()).filter(host => host !== '')
  return hosts === undefined || hosts.length === 0 ? {} : { allowedHosts: hosts }
}

/** The client's address Cloudflare reports (absent on a local workerd: no per-address budget then). */
function remoteAddressOf(request: Request): { remoteAddress?: string } {
  const address = request.headers.get('cf-connecting-ip')
  return address === null ? {} : { remoteAddress: address }
}

/**
 * The Worker's own server and handler, for modern-era requests and refusals: made on the first
 * request, since Workers refuse timers and random numbers in a module's global scope.
 */
let stateless: WebHandler | undefined

function statelessHandler(env: Env): WebHandler {
  if (stateless !== undefined) return stateless
  const handler = webHandler(handlerOptions(env))
  // listen subscribes synchronously: the handler serves the server from its first request on.
  void createEverythingServer({ requestStateKey: env.REQUEST_STATE_KEY, requestStateStore: claimsIn(env.REQUEST_STATES) }).listen(handler)
  return stateless = handler
}

/**
 * Where the isolates mark the `requestState`s used, so that each continues its request once
 * whichever isolate its retry reaches (an isolate's memory would let it be used once per isolate):
 * the RequestStateClaim object named by the state's id.
 */
function claimsIn(namespace: DurableObjectNamespace): RequestStateStore {
  return {
    claim: async (id, expiresAt) => {
      const claim = new Request(`https://request-state.invalid/claim?expires=${expiresAt}`, { method: 'POST' })
      const answer = await namespace.get(namespace.idFromName(id)).fetch(claim)
      // Anything but a claim granted refuses the retry: never run twice.
      return answer.ok && await answer.text() === 'claimed'
    },
  }
}

/**
 * A POST's body, read here to route it: whole, or once past `limit` bytes, what was read so far
 * (the handler that gets it answers 413, as for a body it read itself).
 */
async function readBody(request: Request, limit: number): Promise<{ bytes: Uint8Array<ArrayBuffer>; isWhole: boolean }> {
  const chunks: Uint8Array[] = []
  let size = 0
  let isWhole = true
  const reader = request.body?.getReader()
  while (reader !== undefined) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
    if (size > limit) { isWhole = false; void reader.cancel(); break }
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) { bytes.set(chunk, offset); offset += chunk.byteLength }
  return { bytes, isWhole }
}

/**
 * True when a POST body opens a legacy session: it holds an initialize and is not of the modern era
 * (a modern initialize is refused by the handler, as it would be anywhere). The same rules the
 * handler classifies by, so the Worker and the handler never disagree.
 */
function opensSession(body: Uint8Array, protocolVersion: string | null): boolean {
  const decoded = decodeJsonFrame(body)
  if (decoded.type !== 'message') return false
  return requestsOf(decoded.message).isInitialize && !isModernPost(null, protocolVersion, decoded.message)
}

/** The request with `headers` (the client's, less SESSION_HEADER) and `body` (default: its own, unread). */
function withHeaders(request: Request, headers: Headers, body: BodyInit | null = request.body): Request {
  return new Request(request.url, { method: request.method, headers, body })
}

/** Sends a request to the Durable Object of `sessionId`, naming the session in SESSION_HEADER. */
function toSession(env: Env, sessionId: string, request: Request, headers: Headers, body?: Uint8Array<ArrayBuffer>): Promise<Response> {
  headers.set(SESSION_HEADER, sessionId)
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionId)).fetch(withHeaders(request, headers, body))
}

/** The session id of a new session: 256 random bits, unguessable, so its object is too. */
const newSessionId = () => randomId(32)

/**
 * The Worker: routes each request to the Durable Object of its legacy session (a new one for an
 * initialize or a GET /sse), and serves everything else itself.
 */
export default {
  async fetch(request: Request, env: Env, _ctx: ExecutionContext): Promise<Response> {
    const headers = new Headers(request.headers)
    headers.delete(SESSION_HEADER)
    const { pathname, searchParams } = new URL(request.url)
    const method = request.method
    if (pathname === MCP_PATH) {
      const sessionId = headers.get('mcp-session-id')
      if (method !== 'POST') {
        if (sessionId !== null) return toSession(env, sessionId, request, headers)
      } else {
        const { bytes, isWhole } = await readBody(request, DEFAULT_MAX_MESSAGE_SIZE)
        // The id is chosen here, never by the client: an initialize naming a session opens a new one.
        if (isWhole && opensSession(bytes, headers.get('mcp-protocol-version'))) return toSession(env, newSessionId(), request, headers, bytes)
        if (sessionId !== null) return toSession(env, sessionId, request, headers, bytes)
        // Read already: the handler takes the bytes as they came (and checks them as its own).
        return statelessHandler(env).fetch(withHeaders(request, headers, null), { ...remoteAddressOf(request), body: bytes })
      }
    } else if (pathname === SSE_PATH && method === 'GET') {
      return toSession(env, newSessionId(), request, headers)
    } else if (pathname === MESSAGES_PATH) {
      const sessionId = searchParams.get('sessionId')
      if (sessionId !== null) return toSession(env, sessionId, request, headers)
    }
    return statelessHandler(env).fetch(withHeaders(request, headers), remoteAddressOf(request))
  },
}

/** A session's server and handler, while it lasts. */
interface LiveSession {
  readonly server: McpServer
  readonly handler: WebHandler
  /** True once the object waits for the session's end (`closed`), to close both then. */
  isWatched: boolean
}

/**
 * One legacy session (Streamable HTTP, or HTTP+SSE): its server, handler and state in memory. The
 * Worker sends it every request naming its id, and names the id in SESSION_HEADER; the handler
 * opens the session under that id on an initialize (or GET /sse) and answers 404 for a session it
 * does not hold, whether it ended (DELETE, idle) or never began here.
 *
 * Server and handler live only while the session does: once it ended (or when a request found no
 * session here) both are closed, so no timer of theirs keeps the object in memory (Cloudflare bills
 * an object for the time it is) and the runtime can evict it.
 */
export class McpSession {
  readonly #env: Env
  /** The session this object is, as the Worker named it (the same on every request it forwards). */
  #sessionId: string | undefined
  /** Made on the first request (no timers or random numbers in a constructor's scope either). */
  #live: LiveSession | undefined

  constructor(_state: DurableObjectState, env: Env) {
    this.#env = env
  }

  async fetch(request: Request): Promise<Response> {
    const headers = new Headers(request.headers)
    this.#sessionId ??= headers.get(SESSION_HEADER) ?? undefined
    headers.delete(SESSION_HEADER)
    const live = this.#live ??= this.#start()
    const response = await live.handler.fetch(withHeaders(request, headers), remoteAddressOf(request))
    // Answered: an opening request registered the session by now, any other found it or did not.
    const [session] = live.server.sessions
    if (session === undefined) this.#stop(live)
    else if (!live.isWatched) {
      live.isWatched = true
      void session.closed.then(() => this.#stop(live))
    }
    return response
  }

  #start(): LiveSession {
    const handler = webHandler({
      ...handlerOptions(this.#env),
      // The session's id is the object's name: a second initialize here would repeat it, and the
      // handler refuses a repeated id (500) rather than hold two sessions under one name.
      sessionIdGenerator: () => {
        if (this.#sessionId === undefined) throw new Error('McpSession: a request reached the object without the session id the Worker names')
        return this.#sessionId
      },
    })
    const server = createEverythingServer({ requestStateKey: this.#env.REQUEST_STATE_KEY })
    void server.listen(handler)
    return { server, handler, isWatched: false }
  }

  /** Closes a server and handler no session needs any more (once, whoever asks first). */
  #stop(live: LiveSession): void {
    if (this.#live !== live) return
    this.#live = undefined
    void live.server.close()
  }
}

/**
 * One modern-era `requestState`, once retried: whether it was used. The first claim marks it used
 * and gets `claimed`, every later one `used`; the mark stays until the state expires anyway, when
 * an alarm clears the object's storage. Storage calls hold the object's other events back while
 * they run (its input gate), so two claims at once cannot both find it unused.
 */
export class RequestStateClaim {
  readonly #storage: DurableObjectStorage

  constructor(state: DurableObjectState, _env: Env) {
    this.#storage = state.storage
  }

  async fetch(request: Request): Promise<Response> {
    const expiresAt = Number(new URL(request.url).searchParams.get('expires'))
    if (await this.#storage.get('used') !== undefined) return new Response('used')
    await this.#storage.put('used', true)
    if (Number.isFinite(expiresAt)) await this.#storage.setAlarm(expiresAt)
    return new Response('claimed')
  }

  async alarm(): Promise<void> {
    await this.#storage.deleteAll()
  }
}
