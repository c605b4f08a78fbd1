import type { JsonRpcPayload, RequestId } from './jsonrpc/message.ts'
import type { McpError } from './jsonrpc/errors.ts'

/** An event of the connection's inspection stream. */
export type InspectionEvent =
  | { type: 'rxmcp.frame.in'; message: unknown }
  | { type: 'rxmcp.frame.out'; message: JsonRpcPayload }
  | { type: 'rxmcp.response.unknown'; id: RequestId | null }
  /** A request (or an unreadable frame) left unanswered because this side writes no responses (see `canRespond`). */
  | { type: 'rxmcp.request.unanswered'; id: RequestId | null; error?: McpError }
  | { type: 'rxmcp.handler.error'; method: string; error: unknown }
  /** Inbound ended while `inFlight` requests still run; the connection answers them before it closes (see `Transport.answersAfterEndMs`). */
  | { type: 'rxmcp.ending'; inFlight: number }
  | { type: 'rxmcp.closed'; error?: unknown }
