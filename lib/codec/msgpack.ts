import { Packr } from 'msgpackr'
import type { Codec } from './codec.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from './codec.ts'
import type { Inbound } from '../transport.ts'
import type { JsonRpcPayload } from '../jsonrpc/message.ts'
import { FrameTooLargeError, ParseError } from '../jsonrpc/errors.ts'

/**
 * msgpackr set up so that a JSON value comes back as the same JSON value: plain objects (no
 * records, no Maps), no extension types (no Dates), numbers as numbers. One exception, kept on
 * purpose: msgpackr renames an own `__proto__` key (to `__proto_`) rather than risk prototype
 * pollution.
 */
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, bundleStrings: false })

/** Encodes one payload as msgpack bytes. */
export function encodeMsgpack(payload: JsonRpcPayload): Uint8Array {
  return packr.pack(payload)
}

/** Decodes one msgpack frame into an {@link Inbound}: size-limited, malformed bytes as ParseError. */
export function decodeMsgpackFrame(frame: Uint8Array, maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE): Inbound {
  if (frame.length > maxMessageSize) return { type: 'invalid', error: new FrameTooLargeError(maxMessageSize) }
  try {
    return { type: 'message', message: packr.unpack(frame) }
  } catch (error) {
    return { type: 'invalid', error: new ParseError(`Parse error: invalid msgpack (${error instanceof Error ? error.message : 'unknown'})`) }
  }
}

/**
 * msgpack in binary frames, one message per frame: the `mcp.msgpack` WebSocket subprotocol.
 * @example
 * msgpack.encode({ jsonrpc: '2.0', id: 1, method: 'ping' }) // Uint8Array
 */
export const msgpack: Codec = {
  name: 'msgpack',
  createDecoder: (emit, options) => ({
    write: frame => emit(typeof frame === 'string' ? { type: 'invalid', error: new ParseError('Parse error: text frame on a msgpack connection') } : decodeMsgpackFrame(frame, options?.maxMessageSize)),
    end: () => {},
  }),
  encode: encodeMsgpack,
}
