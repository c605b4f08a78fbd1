/**
 * JSON-RPC 2.0 message types as MCP uses them.
 *
 * MCP forbids `null` ids on requests (MCP 2025-11-25 basic: "the ID MUST NOT be null"), so a
 * {@link RequestId} is a string or a number. Error responses may carry `id: null` when the request's
 * id could not be read (a parse error).
 */

/** A request id: a string or an integer, never null, never reused in one session. */
export type RequestId = string | number

/** The `params` or `result` object of a message: a plain JSON object. */
export type JsonObject = { [key: string]: unknown }

/** `_meta` as MCP defines it: reserved keys such as `progressToken`, plus anything a party adds. */
export interface Meta {
  progressToken?: ProgressToken
  [key: string]: unknown
}

/** A token that ties `notifications/progress` to the request that asked for it. */
export type ProgressToken = string | number

/** A JSON-RPC request: expects exactly one response with the same id. */
export interface JsonRpcRequest {
  jsonrpc: '2.0'
  id: RequestId
  method: string
  params?: JsonObject & { _meta?: Meta }
}

/** A JSON-RPC notification: no id, no response. */
export interface JsonRpcNotification {
  jsonrpc: '2.0'
  method: string
  params?: JsonObject & { _meta?: Meta }
}

/** A successful response. */
export interface JsonRpcResultResponse {
  jsonrpc: '2.0'
  id: RequestId
  result: JsonObject
}

/** The error object of an error response. */
export interface JsonRpcErrorObject {
  code: number
  message: string
  data?: unknown
}

/** An error response; `id` is null only when the request's id could not be determined. */
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0'
  id: RequestId | null
  error: JsonRpcErrorObject
}

/** Either kind of response. */
export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse

/** Any single JSON-RPC message. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse

/** What a transport may carry in one frame: a message, or (2025-03-26 only) a batch. */
export type JsonRpcPayload = JsonRpcMessage | JsonRpcMessage[]
