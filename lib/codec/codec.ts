import type { Decoded, Inbound } from '../transport.ts'
import type { JsonRpcPayload } from '../jsonrpc/message.ts'
import type { StructureLimits } from './structure.ts'

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

/**
 * Options of a {@link Decoder}: the largest message in bytes (default {@link DEFAULT_MAX_MESSAGE_SIZE}),
 * and the bounds on its nesting and members (default `STRUCTURE_DEFAULTS`: 128 levels, 100,000 members).
 */
export interface DecoderOptions extends StructureLimits {
  maxMessageSize?: number
}

/** A codec: how one transport frames messages. */
export interface Codec {
  readonly name: string
  createDecoder(emit: (item: Decoded) => void, options?: DecoderOptions): Decoder
  encode: Encode
}
