import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'

/**
 * What the HTTP servers read off a message to route its answer: no validation (the connection does
 * that), only the ids, so an answer finds its POST and a request in flight is known.
 */

/** The requests of a decoded body (a message or a batch): their ids, and whether one is initialize. */
export function requestsOf(payload: unknown): { ids: RequestId[]; isInitialize: boolean; cancelled: RequestId[]; hasBadId: boolean } {
  const ids: RequestId[] = []
  const cancelled: RequestId[] = []
  let isInitialize = false
  let hasBadId = false
  for (const message of Array.isArray(payload) ? payload : [payload]) {
    if (typeof message !== 'object' || message === null) continue
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } }
    // JSON has no Infinity, but 1e400 parses to it: such an id could never be answered by its value.
    if (typeof id === 'number' && !Number.isFinite(id)) hasBadId = true
    if (typeof method !== 'string') continue
    if (typeof id === 'string' || typeof id === 'number') {
      ids.push(id)
      if (method === 'initialize') isInitialize = true
    } else if (method === 'notifications/cancelled' && typeof params === 'object' && params !== null) {
      const requestId = params.requestId
      if (typeof requestId === 'string' || typeof requestId === 'number') cancelled.push(requestId)
    }
  }
  return { ids, isInitialize, cancelled, hasBadId }
}

/** The id a response (or the first response of a batch) answers, if any. */
export function responseIdOf(payload: JsonRpcPayload): RequestId | undefined {
  const first = Array.isArray(payload) ? payload[0] : payload
  if (first === undefined || 'method' in first || !('id' in first) || first.id === null) return undefined
  return first.id
}

/** Every id a response or a batch of responses answers. */
export function responseIds(payload: JsonRpcPayload): RequestId[] {
  const ids: RequestId[] = []
  for (const message of Array.isArray(payload) ? payload : [payload]) {
    if (!('method' in message) && 'id' in message && message.id !== null) ids.push(message.id)
  }
  return ids
}

/** Whether a payload is a response or a batch of them (results and errors, id null included): no method. */
export function isResponsePayload(payload: JsonRpcPayload): boolean {
  const first = Array.isArray(payload) ? payload[0] : payload
  return first !== undefined && !('method' in first)
}

/** Whether a payload is one error response (not a batch): what a refusal of a whole body looks like. */
export function isFrameError(payload: JsonRpcPayload): boolean {
  return !Array.isArray(payload) && !('method' in payload) && 'error' in payload
}

export { randomId } from '../lib/base64url.ts'
