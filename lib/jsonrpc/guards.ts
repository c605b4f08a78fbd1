import type {
  JsonRpcErrorResponse, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse,
  JsonRpcResultResponse, RequestId,
} from './message.ts'
import { InvalidParamsError, InvalidRequestError, type McpError } from './errors.ts'

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** True for a valid request id: a string or a finite number (MCP forbids null). */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

/** True for a request (has a method and an id). Assumes {@link checkMessage} passed. */
export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message
}

/** True for a notification (has a method, no id). Assumes {@link checkMessage} passed. */
export function isNotification(message: JsonRpcMessage): message is JsonRpcNotification {
  return 'method' in message && !('id' in message)
}

/** True for a response of either kind. Assumes {@link checkMessage} passed. */
export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
  return !('method' in message)
}

/** True for an error response. */
export function isErrorResponse(message: JsonRpcMessage): message is JsonRpcErrorResponse {
  return 'error' in message && !('method' in message)
}

/** True for a result response. */
export function isResultResponse(message: JsonRpcMessage): message is JsonRpcResultResponse {
  return 'result' in message && !('method' in message)
}

/**
 * Checks that a decoded JSON value is one JSON-RPC 2.0 message as MCP allows it.
 *
 * Returns the value typed as a message, or the {@link McpError} to answer with, paired with the id
 * to answer to (null when none could be read). Only the top level is inspected: the cost is a few
 * property reads, whatever the size of params.
 */
export function checkMessage(value: unknown): JsonRpcMessage | { error: McpError; id: RequestId | null } {
  if (!isJsonObject(value)) return { error: new InvalidRequestError('Invalid Request: not a JSON-RPC object'), id: null }
  const id = value.id
  const hasId = id !== undefined
  const answerId = isRequestId(id) ? id : null
  if (value.jsonrpc !== '2.0') return { error: new InvalidRequestError('Invalid Request: jsonrpc must be "2.0"'), id: answerId }
  const method = value.method
  if (method !== undefined) {
    if (typeof method !== 'string') return { error: new InvalidRequestError('Invalid Request: method must be a string'), id: answerId }
    // MCP basic: a request id MUST be a string or integer, never null.
    if (hasId && !isRequestId(id)) return { error: new InvalidRequestError('Invalid Request: id must be a string or a number'), id: null }
    const params = value.params
    if (params !== undefined && !isJsonObject(params)) {
      // JSON-RPC allows by-position params; MCP always passes an object.
      return Array.isArray(params) && hasId
        ? { error: new InvalidParamsError('Invalid params: params must be an object'), id: answerId }
        : { error: new InvalidRequestError('Invalid Request: params must be an object'), id: answerId }
    }
    return value as unknown as JsonRpcMessage
  }
  // A response: exactly one of result and error, and an id (null only with an error).
  const hasResult = 'result' in value
  const hasError = 'error' in value
  if (hasResult === hasError) return { error: new InvalidRequestError('Invalid Request: expected method, result or error'), id: answerId }
  if (hasResult) {
    if (!isRequestId(id)) return { error: new InvalidRequestError('Invalid Request: response id must be a string or a number'), id: null }
    if (!isJsonObject(value.result)) return { error: new InvalidRequestError('Invalid Request: result must be an object'), id: answerId }
    return value as unknown as JsonRpcMessage
  }
  const error = value.error
  if (!isJsonObject(error) || typeof error.code !== 'number' || !Number.isInteger(error.code) || typeof error.message !== 'string') {
    return { error: new InvalidRequestError('Invalid Request: malformed error object'), id: answerId }
  }
  if (id !== null && !isRequestId(id)) return { error: new InvalidRequestError('Invalid Request: bad response id'), id: null }
  return value as unknown as JsonRpcMessage
}

/** True when {@link checkMessage} refused the value. */
export function isCheckFailure(checked: ReturnType<typeof checkMessage>): checked is { error: McpError; id: RequestId | null } {
  return 'error' in checked && !('jsonrpc' in checked)
}
