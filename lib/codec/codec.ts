import type { Inbound } from '../transport.ts'
import type { JsonRpcPayload } from '../jsonrpc/message.ts'

/**
 * Default maximum size of one incoming message, in bytes (4 MiB), for the network transports. stdio
 * raises it to 64 MiB (`STDIO_DEFAULTS`): a local peer sends whole files.
 */
export const DEFAULT_MAX_MESSAGE_SIZE = 4 * 1024 * 1024

/**
 * A streaming decoder: bytes in, {@link Inbound} items out through the `emit` callback it was made
 * with. `write` may be called with chunks split anywhere; `end` flushes what is left.
 */
export interface Decoder {
  write(chunk: Uint8Array | string): void
  end(): void
}

/** Turns one payload into the bytes (or text) of one frame. */
export type Encode = (payload: JsonRpcPayload) => string | Uint8Array

/** A codec: how one transport frames messages. */
export interface Codec {
  readonly name: string
  createDecoder(emit: (item: Inbound) => void, options?: { maxMessageSize?: number }): Decoder
  encode: Encode
}
