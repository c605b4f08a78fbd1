import type { Observable } from 'rxjs'
import type { JsonRpcPayload } from './jsonrpc/message.ts'
import type { McpError, LocalError } from './jsonrpc/errors.ts'

/**
 * One decoded item from a transport: a JSON value that still has to be checked as JSON-RPC, or a
 * frame that could not be decoded (not JSON, invalid UTF-8, over the size limit).
 *
 * Transports decode bytes with a codec from `lib/codec`; they never look inside the value.
 */
export type Inbound =
  | { type: 'message'; message: unknown }
  | { type: 'invalid'; error: McpError | LocalError }

/**
 * The contract every transport implements: the only extension point for I/O.
 *
 * - `inbound` is subscribed to once, by the connection. Subscribing starts delivery; it emits one
 *   {@link Inbound} per decoded frame, completes when the peer closes cleanly, and errors with a
 *   `TransportError` on failure. Unsubscribing stops reading.
 * - `send` writes one message (or a batch) as one frame. It returns a Promise when the caller
 *   should wait (the sink is full), otherwise nothing; it throws or rejects with `TransportError`
 *   when the transport is closed.
 * - `close` ends the transport; `inbound` completes. Calling it twice is harmless.
 *
 * @example
 * const transport: Transport = {
 *   inbound: webSocketMessages.pipe(map(text => decodeJson(text))),
 *   send: message => socket.send(JSON.stringify(message)),
 *   close: async () => socket.close(),
 * }
 */
export interface Transport {
  readonly inbound: Observable<Inbound>
  send(payload: JsonRpcPayload): void | Promise<void>
  close(): Promise<void>
  /** Optional: a short name for inspection and errors (`'stdio'`, `'memory'`). */
  readonly kind?: string
}
