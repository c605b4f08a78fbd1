import type { JsonRpcResponse } from './jsonrpc/message.ts'
import { InvalidRequestError } from './jsonrpc/errors.ts'
import { checkMessage, isCheckFailure } from './jsonrpc/guards.ts'

/** Collects the responses of one JSON-RPC batch (MCP 2025-03-26) and sends them as one array. */
export class BatchCollector {
  readonly responses: JsonRpcResponse[] = []
  constructor(public remaining: number, readonly flush: (responses: JsonRpcResponse[]) => void) {}
  add(response: JsonRpcResponse): void {
    this.responses.push(response)
    this.skip()
  }
  skip(): void {
    if (--this.remaining === 0 && this.responses.length > 0) this.flush(this.responses)
  }
}

/**
 * Why a JSON-RPC batch is refused as a whole, before any entry is looked at: batches are not
 * allowed now (`isAllowed` false), the batch is empty, or it has more than `limit` entries (so
 * one frame cannot keep the event loop busy or make the server write an error per entry).
 * Undefined when the batch may be served.
 */
export function batchRefusal(values: readonly unknown[], isAllowed: boolean, limit: number): InvalidRequestError | undefined {
  if (!isAllowed) return new InvalidRequestError('Invalid Request: JSON-RPC batches are not supported in this protocol version')
  if (values.length === 0) return new InvalidRequestError('Invalid Request: empty batch')
  if (values.length > limit) {
    return new InvalidRequestError(`Invalid Request: a batch of ${values.length} entries exceeds the limit of ${limit}`, { entries: values.length, limit })
  }
  return undefined
}

/** How many entries of a batch get a response: its requests, and its malformed entries (answered with an error). */
export function countAnswered(values: readonly unknown[]): number {
  let answered = 0
  for (const value of values) {
    const checked = checkMessage(value)
    if (isCheckFailure(checked) || ('method' in checked && 'id' in checked)) answered++
  }
  return answered
}
