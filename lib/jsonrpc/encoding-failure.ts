import type { JsonRpcResponse, RequestId } from './message.ts'
import { InternalError, LocalError } from './errors.ts'

/** The answer to a request whose result or error could not be encoded. */
export function unserializable(id: RequestId | null): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: new InternalError('Internal error: the result could not be serialized').toJSON() }
}

/**
 * True for a failure to encode a message (JSON.stringify's TypeError on a cycle or a BigInt, a
 * RangeError, whatever a toJSON threw), as opposed to the transport's own failure, which is always
 * a local error (TransportError, ConnectionClosedError).
 */
export function isEncodingFailure(error: unknown): boolean {
  return !(error instanceof LocalError)
}

/** True when `value` can be encoded as JSON (tried only on the failure path: it encodes the value). */
export function isEncodable(value: unknown): boolean {
  try { JSON.stringify(value); return true } catch { return false }
}
