import { asyncScheduler, interval, Subscription, type SchedulerLike } from '../lib/rx.ts'
import type { Inbound, SendOptions, Transport, TransportServer } from '../lib/transport.ts'
import type { JsonRpcMessage, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { ErrorCode, InternalError, InvalidRequestError, McpError } from '../lib/jsonrpc/errors.ts'
import { replyTransport } from './reply-transport.ts'
import { stdioClient, type StdioClientOptions, type StdioClientTransport } from './stdio.ts'

export { shareUpstream, SHARED_UPSTREAM_DEFAULTS, type SharedUpstream, type SharedUpstreamOptions } from './bridge-shared.ts'
export { isLoopbackHost } from './origin.ts'

/** Options of {@link bridge}. */
export interface BridgeOptions {
  /** Called for each session when its upstream transport is made (to log its pid, say). */
  onSession?: (upstream: Transport) => void
  /** Where errors nobody observes go (default: stderr). */
  reportError?: (error: unknown) => void
  /**
   * Most upstreams (child processes) alive at once (default 8). A session whose first message would
   * start one more is answered with an error and closed. With {@link shareUpstream} each session's
   * view counts as one, so `rxmcp bridge --shared` leaves this unbounded and bounds its processes
   * with `shareUpstream`'s `maxUpstreams` (its `--max-children`).
   */
  maxChildren?: number
  /** Most upstreams alive at once for one remote address (default 4); transports that name no address are not counted. */
  maxChildrenPerClient?: number
  /**
   * Milliseconds a session may send nothing, with no request of its waiting for an answer, before
   * its upstream is stopped and the session closed (default 5 minutes; 0 never).
   */
  childIdleTimeout?: number
  /** Where time comes from (default `asyncScheduler`): tests pass a virtual one. */
  scheduler?: SchedulerLike
}

/**
 * DEFAULTS of {@link BridgeOptions} and of {@link bridgeChild}: `maxMessageSize` is the largest
 * message the bridge takes from a child, and what `rxmcp bridge` allows on its listeners.
 */
export const BRIDGE_DEFAULTS = {
  maxChildren: 8,
  maxChildrenPerClient: 4,
  childIdleTimeout: 5 * 60_000,
  maxMessageSize: 16 * 1024 * 1024,
  shutdownGraceMs: 1000,
} as const

/** A running bridge. */
export interface Bridge {
  /** Sessions being forwarded now. */
  readonly sessionCount: number
  /** Upstream transports (child processes) alive now. */
  readonly childCount: number
  /** Stops accepting, closes every session and every upstream transport. */
  close(): Promise<void>
}

/**
 * Forwards every session a listener opens to an upstream transport of its own (a stdio child per
 * session, typically), message for message in both directions, so any stdio MCP server is served
 * over Streamable HTTP, legacy SSE and WebSocket. Messages are not interpreted beyond what the
 * downstream transport needs to route them: the upstream's progress notifications and requests go
 * to the stream of the request they belong to (by progress token, or the only request in flight).
 *
 * The upstream is made on the session's first message, not when the session opens, so a session
 * that sends nothing (a stray `GET /sse`) costs no process. At most `maxChildren` upstreams live at
 * once, and `maxChildrenPerClient` per remote address; beyond that the session's requests are
 * answered with an error and it is closed. A session idle for `childIdleTimeout` is closed with its
 * upstream. Invalid JSON from downstream is answered -32700; an upstream answer over the size limit
 * becomes an error answer to the request that waited for it. When either side ends, the other is
 * closed.
 *
 * @example
 * bridge([streamableHttp({ port: 3000 })], () => bridgeChild({ command: 'npx', args: ['@modelcontextprotocol/server-everything'] }))
 * @see bridgeChild
 * @see shareUpstream
 */
export function bridge(listeners: readonly TransportServer[], upstream: () => Transport, options: BridgeOptions = {}): Bridge {
  const report = options.reportError ?? ((error: unknown) => console.error('[rxmcp bridge]', error))
  const scheduler = options.scheduler ?? asyncScheduler
  const maxChildren = options.maxChildren ?? BRIDGE_DEFAULTS.maxChildren
  const maxPerClient = options.maxChildrenPerClient ?? BRIDGE_DEFAULTS.maxChildrenPerClient
  const idleTimeout = options.childIdleTimeout ?? BRIDGE_DEFAULTS.childIdleTimeout
  const sessions = new Set<BridgedConnection>()
  // Ended sessions whose upstream is still shutting down: their processes count until they are gone.
  const stopping = new Set<BridgedConnection>()
  const subscription = new Subscription()
  const children = () => { let count = stopping.size; for (const session of sessions) if (session.upstream !== undefined) count++; return count }
  const childrenOf = (address: string) => {
    let count = 0
    for (const session of [...sessions, ...stopping]) if (session.upstream !== undefined && session.address === address) count++
    return count
  }
  const admit = (session: BridgedConnection): string | undefined => {
    if (children() >= maxChildren) return `Server busy: ${maxChildren} sessions are being served; try again later`
    if (session.address !== undefined && childrenOf(session.address) >= maxPerClient) return `Server busy: ${maxPerClient} sessions from ${session.address} are being served; try again later`
    return undefined
  }
  for (const listener of listeners) {
    // A request that belongs to no session (a modern-era POST) goes to a child as a one-exchange transport.
    if (listener.requests !== undefined) subscription.add(listener.requests.subscribe(envelope => serve(replyTransport(envelope, 'streamable-http'))))
    subscription.add(listener.connections.subscribe(downstream => serve(downstream)))
  }
  function serve(downstream: Transport): void {
    const session = new BridgedConnection(downstream, scheduler.now(), report, () => {
      sessions.delete(session)
      if (session.upstream !== undefined) stopping.add(session)
    }, () => stopping.delete(session))
    sessions.add(session)
    session.start(() => {
      const refusal = admit(session)
      if (refusal !== undefined) return refusal
      return upstream()
    }, scheduler, target => options.onSession?.(target))
  }
  if (idleTimeout > 0) {
    // Checked a few times per timeout, so a session overstays by at most a quarter of it.
    subscription.add(interval(Math.max(10, Math.min(idleTimeout / 4, 30_000)), scheduler).subscribe(() => {
      const now = scheduler.now()
      for (const session of sessions) if (session.isIdleSince(now - idleTimeout)) session.end()
    }))
  }
  return {
    get sessionCount() { return sessions.size },
    get childCount() { return children() },
    async close() {
      subscription.unsubscribe()
      const all = [...sessions]
      await Promise.allSettled([...listeners.map(listener => listener.close()), ...all.map(session => session.end())])
      sessions.clear()
    },
  }
}

/**
 * One downstream session and, from its first message on, its upstream.
 *
 * ```
 *  open --first message--> admitted (upstream made) --either side ends / idle--> ended
 *    \--first message, over a limit--> refused (requests answered with an error) --> ended
 * ```
 */
class BridgedConnection {
  upstream: Transport | undefined
  /** The client's address, as the first message's envelope gave it (its limit per address counts the children by it). */
  address: string | undefined
  /** Requests from downstream still unanswered, and the progress tokens they carry, for routing. */
  readonly #inFlight = new Set<RequestId>()
  readonly #byProgressToken = new Map<string | number, RequestId>()
  /** When downstream last sent anything (scheduler time). */
  #lastActivity: number
  #ended: Promise<void> | undefined
  #now: () => number = () => 0

  constructor(readonly downstream: Transport, now: number, readonly report: (error: unknown) => void, readonly onEnd: () => void, readonly onStopped: () => void) {
    this.#lastActivity = now
  }

  /** Reads downstream; `open` makes the upstream (or says why not), `onOpen` is told once it runs. */
  start(open: () => Transport | string, scheduler: SchedulerLike, onOpen: (upstream: Transport) => void): void {
    this.#now = () => scheduler.now()
    this.downstream.inbound.subscribe({
      next: item => this.#fromDownstream(item, open, onOpen),
      error: () => void this.end(),
      complete: () => void this.end(),
    })
  }

  isIdleSince(time: number): boolean {
    return this.upstream !== undefined && this.#inFlight.size === 0 && this.#lastActivity <= time
  }

  #fromDownstream(item: Inbound, open: () => Transport | string, onOpen: (upstream: Transport) => void): void {
    // A shared session's record is the server's business: a bridge keeps no session state to restore.
    if (this.#ended !== undefined || item.type === 'session') return
    this.#lastActivity = this.#now()
    if (item.type === 'invalid') {
      // JSON-RPC 2.0: what cannot be parsed is answered -32700 with a null id; an oversized frame is
      // an invalid request, answered with its id when the codec could read it.
      const error = item.error instanceof McpError ? item.error : new InvalidRequestError(`Invalid Request: ${item.error.message}`)
      const id = (item.error as { id?: RequestId; kind?: string }).kind === 'request' ? (item.error as { id?: RequestId }).id ?? null : null
      this.#forward(this.downstream, { jsonrpc: '2.0', id: id as RequestId, error: error.toJSON() })
      return
    }
    const payload = item.message as JsonRpcPayload
    const messages = Array.isArray(payload) ? payload : [payload]
    if (this.upstream === undefined) {
      this.address ??= item.requestInfo?.remoteAddress
      const opened = open()
      if (typeof opened === 'string') return this.#refuse(messages, opened)
      this.upstream = opened
      opened.inbound.subscribe({
        next: upstreamItem => this.#fromUpstream(upstreamItem),
        error: () => void this.end(),
        complete: () => void this.end(),
      })
      onOpen(opened)
    }
    for (const message of messages) this.#track(message)
    this.#forward(this.upstream, payload)
  }

  /** Answers every request of the first payload with `reason` and closes the session. */
  #refuse(messages: JsonRpcMessage[], reason: string): void {
    for (const message of messages) {
      if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) continue
      this.#forward(this.downstream, { jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.ConnectionClosed, message: reason } })
    }
    // After the listener has handed the answers on (an HTTP POST's stream opens once its body is read).
    this.#ended = new Promise<void>(resolve => setImmediate(resolve)).then(() => this.#close())
  }

  #fromUpstream(item: Inbound): void {
    if (item.type === 'session') return
    if (item.type === 'invalid') {
      // An answer too large to take: the request that waits for it gets an error instead of nothing.
      const details = item.error as { id?: RequestId; kind?: string; limit?: number }
      // A request of the child's too large to pass on: the child hears so, as a client would answer it.
      if (details.kind === 'request' && details.id !== undefined) {
        this.#forward(this.upstream!, { jsonrpc: '2.0', id: details.id, error: new InvalidRequestError(`Invalid Request: ${item.error.message}`).toJSON() })
        return
      }
      const id = details.kind === 'response' && details.id !== undefined && this.#inFlight.has(details.id) ? details.id
        : details.kind === undefined && this.#inFlight.size === 1 ? this.#inFlight.values().next().value! : undefined
      if (id === undefined) { this.report(item.error); return }
      this.#settle(id)
      const error = new InternalError(`The server's answer could not be passed on: ${item.error.message}`)
      this.#forward(this.downstream, { jsonrpc: '2.0', id, error: error.toJSON() })
      return
    }
    const payload = item.message as JsonRpcPayload
    const first = Array.isArray(payload) ? payload[0] : payload
    let relatedRequestId: RequestId | undefined
    if (first !== undefined && !('method' in first) && 'id' in first && first.id !== null) {
      for (const message of Array.isArray(payload) ? payload : [payload]) if (!('method' in message) && 'id' in message && message.id !== null) this.#settle(message.id)
    } else if (first !== undefined && 'method' in first) {
      relatedRequestId = this.#relatedTo(first)
    }
    this.#forward(this.downstream, payload, relatedRequestId === undefined ? undefined : { relatedRequestId })
  }

  #track(message: JsonRpcMessage): void {
    if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) return
    this.#inFlight.add(message.id)
    const token = message.params?._meta?.progressToken
    if (token !== undefined) this.#byProgressToken.set(token, message.id)
  }

  #settle(id: RequestId): void {
    this.#inFlight.delete(id)
    for (const [token, requestId] of this.#byProgressToken) if (requestId === id) this.#byProgressToken.delete(token)
  }

  #relatedTo(message: JsonRpcMessage): RequestId | undefined {
    const params = 'params' in message ? message.params as { progressToken?: unknown } | undefined : undefined
    const token = params?.progressToken
    if ('method' in message && message.method === 'notifications/progress' && (typeof token === 'string' || typeof token === 'number')) return this.#byProgressToken.get(token)
    // A request or log from the upstream while exactly one request is in flight belongs to it.
    if (this.#inFlight.size === 1) return this.#inFlight.values().next().value
    return undefined
  }

  #forward(target: Transport, payload: JsonRpcPayload, options?: SendOptions): void {
    try {
      const written = options === undefined ? target.send(payload) : target.send(payload, options)
      written?.catch(this.report)
    } catch (error) {
      this.report(error)
    }
  }

  /** Closes both sides once; resolves when both are closed. */
  end(): Promise<void> {
    this.#ended ??= this.#close()
    return this.#ended
  }

  async #close(): Promise<void> {
    this.onEnd()
    await Promise.allSettled([this.downstream.close(), this.upstream?.close()])
    this.onStopped()
  }
}

/** Options of {@link bridgeChild}: those of `stdioClient` with the bridge's defaults. */
export type BridgeChildOptions = StdioClientOptions

/**
 * A stdio child as the bridge wants it: a minimal environment (PATH, HOME and the like, plus `env`)
 * unless `inheritEnv`, its own process group so shutdown reaches grandchildren (`npx` -> `node`),
 * messages up to {@link BRIDGE_DEFAULTS}.maxMessageSize, and a short shutdown grace. Options given
 * win over these defaults.
 *
 * @example
 * bridge([websocket({ port: 3001 })], () => bridgeChild({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] }))
 */
export function bridgeChild(options: BridgeChildOptions): StdioClientTransport {
  return stdioClient({
    processGroup: true,
    maxMessageSize: BRIDGE_DEFAULTS.maxMessageSize,
    shutdownGraceMs: BRIDGE_DEFAULTS.shutdownGraceMs,
    stderr: 'inherit',
    ...options,
  })
}

