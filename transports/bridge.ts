import { Observable, Subject, Subscription } from 'rxjs'
import type { Inbound, SendOptions, Transport, TransportServer } from '../lib/transport.ts'
import type { JsonRpcMessage, JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'

/** Options of {@link bridge}. */
export interface BridgeOptions {
  /** Called for each session with the upstream transport made for it (to log its pid, say). */
  onSession?: (upstream: Transport) => void
  /** Where errors nobody observes go (default: stderr). */
  reportError?: (error: unknown) => void
}

/** A running bridge. */
export interface Bridge {
  /** Sessions being forwarded now. */
  readonly sessionCount: number
  /** Stops accepting, closes every session and every upstream transport. */
  close(): Promise<void>
}

/**
 * Forwards every session a listener opens to an upstream transport of its own (a stdio child per
 * session, typically), message for message in both directions, so any stdio MCP server is served
 * over Streamable HTTP, legacy SSE and WebSocket. Messages are not interpreted beyond what the
 * downstream transport needs to route them: the upstream's progress notifications and requests go
 * to the stream of the request they belong to (by progress token, or the only request in flight).
 * When either side ends, the other is closed.
 *
 * @example
 * bridge([streamableHttp({ port: 3000 })], () => stdioClient({ command: 'npx', args: ['@modelcontextprotocol/server-everything'] }))
 */
export function bridge(listeners: readonly TransportServer[], upstream: () => Transport, options: BridgeOptions = {}): Bridge {
  const report = options.reportError ?? ((error: unknown) => console.error('[rxmcp bridge]', error))
  const sessions = new Set<{ downstream: Transport; upstream: Transport }>()
  const subscription = new Subscription()
  for (const listener of listeners) {
    subscription.add(listener.connections.subscribe(downstream => {
      const target = upstream()
      const session = { downstream, upstream: target }
      sessions.add(session)
      wire(downstream, target, report, () => sessions.delete(session))
      options.onSession?.(target)
    }))
  }
  return {
    get sessionCount() { return sessions.size },
    async close() {
      subscription.unsubscribe()
      await Promise.allSettled([
        ...listeners.map(listener => listener.close()),
        ...[...sessions].flatMap(session => [session.downstream.close(), session.upstream.close()]),
      ])
      sessions.clear()
    },
  }
}

function wire(downstream: Transport, upstream: Transport, report: (error: unknown) => void, onEnd: () => void): void {
  // Requests from downstream still unanswered, and the progress tokens they carry, for routing.
  const inFlight = new Set<RequestId>()
  const byProgressToken = new Map<string | number, RequestId>()
  let isEnded = false
  const end = () => {
    if (isEnded) return
    isEnded = true
    onEnd()
    void downstream.close().catch(report)
    void upstream.close().catch(report)
  }
  const forward = (target: Transport, payload: JsonRpcPayload, options?: SendOptions) => {
    try {
      const written = options === undefined ? target.send(payload) : target.send(payload, options)
      written?.catch(report)
    } catch (error) {
      report(error)
    }
  }
  downstream.inbound.subscribe({
    next: item => {
      if (item.type === 'invalid') return
      const payload = item.message as JsonRpcPayload
      for (const message of Array.isArray(payload) ? payload : [payload]) trackRequest(message, inFlight, byProgressToken)
      forward(upstream, payload)
    },
    error: end,
    complete: end,
  })
  upstream.inbound.subscribe({
    next: item => {
      if (item.type === 'invalid') return
      const payload = item.message as JsonRpcPayload
      const first = Array.isArray(payload) ? payload[0] : payload
      let relatedRequestId: RequestId | undefined
      if (first !== undefined && !('method' in first) && 'id' in first && first.id !== null) {
        for (const message of Array.isArray(payload) ? payload : [payload]) settle(message, inFlight, byProgressToken)
      } else if (first !== undefined && 'method' in first) {
        relatedRequestId = relatedTo(first, inFlight, byProgressToken)
      }
      forward(downstream, payload, relatedRequestId === undefined ? undefined : { relatedRequestId })
    },
    error: end,
    complete: end,
  })
}

function trackRequest(message: JsonRpcMessage, inFlight: Set<RequestId>, byProgressToken: Map<string | number, RequestId>): void {
  if (!('method' in message) || !('id' in message)) return
  inFlight.add(message.id)
  const token = message.params?._meta?.progressToken
  if (token !== undefined) byProgressToken.set(token, message.id)
}

function settle(message: JsonRpcMessage, inFlight: Set<RequestId>, byProgressToken: Map<string | number, RequestId>): void {
  if ('method' in message || !('id' in message) || message.id === null) return
  inFlight.delete(message.id)
  for (const [token, id] of byProgressToken) if (id === message.id) byProgressToken.delete(token)
}

function relatedTo(message: JsonRpcMessage, inFlight: Set<RequestId>, byProgressToken: Map<string | number, RequestId>): RequestId | undefined {
  const params = 'params' in message ? message.params as { progressToken?: unknown } | undefined : undefined
  const token = params?.progressToken
  if ('method' in message && message.method === 'notifications/progress' && (typeof token === 'string' || typeof token === 'number')) return byProgressToken.get(token)
  // A request or log from the upstream while exactly one request is in flight belongs to it.
  if (inFlight.size === 1) return inFlight.values().next().value
  return undefined
}

/** One upstream transport shared by many sessions: see {@link shareUpstream}. */
export interface SharedUpstream {
  /** A transport of its own for one session, multiplexed onto the upstream. */
  open(): Transport
  /** Closes the upstream (and with it every session's transport). */
  close(): Promise<void>
}

/**
 * Shares one upstream (one stdio child) between many sessions, for servers that keep no per-session
 * state. Each session gets a transport that looks like a dedicated upstream: request ids and
 * progress tokens are renamed on the way up and back on the way down, so sessions never see each
 * other's; the upstream is initialized once (by the first session) and later sessions get that
 * answer; upstream notifications that belong to no request (list_changed, logs) go to every session.
 */
export function shareUpstream(upstream: Transport, report: (error: unknown) => void = error => console.error('[rxmcp bridge]', error)): SharedUpstream {
  interface Session { inbound: Subject<Inbound>; isOpen: boolean }
  const sessions = new Set<Session>()
  // Upstream request id -> the session and the id it used.
  const requests = new Map<RequestId, { session: Session; id: RequestId }>()
  // Upstream progress token -> the session and the token it used.
  const tokens = new Map<string, { session: Session; token: string | number }>()
  // Upstream request id -> the progress token renamed for it, dropped with the answer.
  const tokenOf = new Map<RequestId, string>()
  let nextId = 0
  let lastSession: Session | undefined
  // The upstream's answer to initialize, once it came, and who waits for it meanwhile.
  let initializeResult: JsonRpcPayload | undefined
  let initializeWaiters: { session: Session; id: RequestId }[] | undefined
  let isInitializedSent = false
  let isStarted = false
  let failure: unknown

  const deliver = (session: Session, message: JsonRpcMessage) => { if (session.isOpen) session.inbound.next({ type: 'message', message }) }
  const start = () => {
    if (isStarted) return
    isStarted = true
    upstream.inbound.subscribe({
      next: item => {
        if (item.type === 'invalid') return
        const payload = item.message as JsonRpcPayload
        for (const message of Array.isArray(payload) ? payload : [payload]) fromUpstream(message)
      },
      error: error => { failure = error; for (const session of sessions) session.inbound.error(error) },
      complete: () => { for (const session of sessions) session.inbound.complete() },
    })
  }
  const fromUpstream = (message: JsonRpcMessage) => {
    if (!('method' in message)) {
      if (message.id === null) return
      const owner = requests.get(message.id)
      if (owner === undefined) return
      requests.delete(message.id)
      const token = tokenOf.get(message.id)
      if (token !== undefined) { tokenOf.delete(message.id); tokens.delete(token) }
      if (initializeWaiters !== undefined && owner.id === INITIALIZE_MARK) {
        initializeResult = 'result' in message ? message.result as unknown as JsonRpcPayload : undefined
        for (const waiter of initializeWaiters) deliver(waiter.session, { ...message, id: waiter.id })
        initializeWaiters = undefined
        return
      }
      return deliver(owner.session, { ...message, id: owner.id })
    }
    if (message.method === 'notifications/progress') {
      const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken
      const owner = tokens.get(String(token))
      if (owner !== undefined) deliver(owner.session, { ...message, params: { ...message.params, progressToken: owner.token } })
      return
    }
    if ('id' in message) {
      // A request from the upstream: to the session whose requests are in flight, else the latest.
      const owners = new Set([...requests.values()].map(owner => owner.session))
      const target = owners.size === 1 ? owners.values().next().value! : lastSession
      if (target !== undefined) deliver(target, message)
      return
    }
    for (const session of sessions) deliver(session, message)
  }
  const toUpstream = (session: Session, message: JsonRpcMessage): JsonRpcMessage | undefined => {
    if (!('method' in message)) return message
    if (!('id' in message)) {
      if (message.method === 'notifications/initialized') {
        if (isInitializedSent) return undefined
        isInitializedSent = true
        return message
      }
      if (message.method === 'notifications/cancelled') {
        const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId
        for (const [upstreamId, owner] of requests) {
          if (owner.session === session && owner.id === requestId) return { ...message, params: { ...message.params, requestId: upstreamId } }
        }
        return undefined
      }
      return message
    }
    if (message.method === 'initialize') {
      if (initializeResult !== undefined) { deliver(session, { jsonrpc: '2.0', id: message.id, result: initializeResult as never }); return undefined }
      if (initializeWaiters !== undefined) { initializeWaiters.push({ session, id: message.id }); return undefined }
      initializeWaiters = [{ session, id: message.id }]
      const upstreamId = `i${nextId++}`
      requests.set(upstreamId, { session, id: INITIALIZE_MARK })
      return { ...message, id: upstreamId }
    }
    const upstreamId = nextId++
    requests.set(upstreamId, { session, id: message.id })
    const token = message.params?._meta?.progressToken
    if (token === undefined) return { ...message, id: upstreamId }
    const upstreamToken = `t${upstreamId}`
    tokens.set(upstreamToken, { session, token })
    tokenOf.set(upstreamId, upstreamToken)
    return { ...message, id: upstreamId, params: { ...message.params, _meta: { ...message.params!._meta, progressToken: upstreamToken } } }
  }
  return {
    open() {
      const session: Session = { inbound: new Subject<Inbound>(), isOpen: true }
      sessions.add(session)
      return {
        kind: 'shared',
        inbound: new Observable<Inbound>(subscriber => {
          const subscription = session.inbound.subscribe(subscriber)
          if (failure !== undefined) subscriber.error(failure)
          start()
          return subscription
        }),
        send: payload => {
          lastSession = session
          const out: JsonRpcMessage[] = []
          for (const message of Array.isArray(payload) ? payload : [payload]) {
            const mapped = toUpstream(session, message)
            if (mapped !== undefined) out.push(mapped)
          }
          if (out.length === 0) return
          return upstream.send(Array.isArray(payload) ? out : out[0]!)
        },
        close: async () => {
          if (!session.isOpen) return
          session.isOpen = false
          sessions.delete(session)
          for (const [id, owner] of requests) if (owner.session === session && owner.id !== INITIALIZE_MARK) requests.delete(id)
          for (const [token, owner] of tokens) if (owner.session === session) tokens.delete(token)
          session.inbound.complete()
        },
      }
    },
    close: () => upstream.close(),
  }
}

/** Stands for "the shared initialize" in the request table. */
const INITIALIZE_MARK = '\0initialize'
