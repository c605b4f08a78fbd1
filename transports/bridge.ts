import { Subscription } from 'rxjs'
import type { SendOptions, Transport, TransportServer } from '../lib/transport.ts'
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
