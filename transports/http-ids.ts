import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'

/**
 * What the HTTP servers read off a message to route its answer: no validation (the connection does
 * that), only the ids, so an answer finds its POST and a request in flight is known.
 */

export { requestsOf } from '../lib/http/requests.ts'

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
