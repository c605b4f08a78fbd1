import type { Codec } from './codec.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from './codec.ts'
import type { Inbound } from '../transport.ts'
import { FrameTooLargeError, ParseError } from '../jsonrpc/errors.ts'
import { decodeJsonText } from './json-lines.ts'

/**
 * One JSON message per frame, for transports that frame messages themselves (a WebSocket text
 * frame, an HTTP body). Each `write` is one whole frame.
 */
export const json: Codec = {
  name: 'json',
  createDecoder: (emit, options) => {
    const limit = options?.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE
    const text = new TextDecoder('utf-8', { fatal: true })
    return {
      write: frame => emit(decodeJsonFrame(frame, limit, text)),
      end: () => {},
    }
  },
  encode: payload => JSON.stringify(payload),
}

/**
 * Decodes one whole frame: size-limited, UTF-8 checked, JSON parsed.
 * @example
 * decodeJsonFrame('{"jsonrpc":"2.0","method":"ping","id":1}') // { type: 'message', message: {...} }
 */
export function decodeJsonFrame(frame: Uint8Array | string, maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE, text = new TextDecoder('utf-8', { fatal: true })): Inbound {
  if (typeof frame === 'string') {
    // A string's UTF-8 size is at most 3 bytes per UTF-16 unit; measure exactly only when close.
    if (frame.length * 3 > maxMessageSize && new TextEncoder().encode(frame).length > maxMessageSize) {
      return { type: 'invalid', error: new FrameTooLargeError(maxMessageSize) }
    }
    try {
      return { type: 'message', message: JSON.parse(frame) }
    } catch (error) {
      return { type: 'invalid', error: new ParseError(`Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`) }
    }
  }
  if (frame.length > maxMessageSize) return { type: 'invalid', error: new FrameTooLargeError(maxMessageSize) }
  return decodeJsonText(frame, text)
}
