import type { RequestId } from '../jsonrpc/message.ts'

/** What the HTTP listeners read off a decoded body before handing it on (see {@link requestsOf}). */
export interface BodyRequests {
  /** The ids of its requests, in order. */
  ids: RequestId[]
  /** True when one of its requests is initialize. */
  isInitialize: boolean
  /** The ids its notifications/cancelled name. */
  cancelled: RequestId[]
  /** True when a message's id is a number that is not finite (1e400 parses to Infinity). */
  hasBadId: boolean
}

/**
 * The requests of a decoded body (a message or a batch): their ids, and whether one is initialize.
 * No validation (the connection does that): only what routes an answer and guards a session.
 */
export function requestsOf(payload: unknown): BodyRequests {
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

