import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/**
 * Records every message an official SDK client transport hands to its client, in wire order,
 * before the SDK dispatches it. Call it after `client.connect(transport)` (the client sets
 * `onmessage` there).
 *
 * Why: the SDK client runs a notification handler a microtask late but a response at once, so a
 * progress notification read in the same chunk as its response (likely on a loaded machine, and
 * always possible over stdio, ws and the legacy SSE client) can reach `onprogress` after the request
 * is gone, and is dropped. What rxmcp guarantees is what it writes: read that here.
 */
export function recordWire(transport: { onmessage?: (message: JSONRPCMessage, extra?: never) => void }): JSONRPCMessage[] {
  const wire: JSONRPCMessage[] = []
  const dispatch = transport.onmessage
  if (dispatch === undefined) throw new Error('recordWire: the transport has no onmessage yet (call it after connect)')
  transport.onmessage = (message, extra) => { wire.push(message); dispatch.call(transport, message, extra) }
  return wire
}

/**
 * The progress values written for the request answered by the last response on `wire`: those
 * before that response, in order, and how many came after it (none, when the server keeps the rule
 * that progress stops with the response).
 */
export function progressOfLastAnswer(wire: readonly JSONRPCMessage[]): { before: number[]; after: number } {
  const answer = wire.findLastIndex(message => 'id' in message && !('method' in message))
  if (answer < 0) throw new Error('progressOfLastAnswer: no response on the wire')
  const id = (wire[answer] as { id: string | number }).id
  const isProgress = (message: JSONRPCMessage) => 'method' in message && message.method === 'notifications/progress' && (message.params as { progressToken?: unknown } | undefined)?.progressToken === id
  const progress = (message: JSONRPCMessage) => (message as unknown as { params: { progress: number } }).params.progress
  return { before: wire.slice(0, answer).filter(isProgress).map(progress), after: wire.slice(answer + 1).filter(isProgress).length }
}
