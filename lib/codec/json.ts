import type { Codec } from './codec.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from './codec.ts'
import type { Decoded, Inbound } from '../transport.ts'
import { FrameTooLargeError } from '../jsonrpc/errors.ts'
import { decodeJsonText, parseJsonText } from './json-lines.ts'
import { FRAME_HEAD_BYTES, FRAME_TAIL_BYTES, readFrameHead } from './frame-head.ts'
import { limitsOf, type StructureLimits } from './structure.ts'

/**
 * One JSON message per frame, for transports that frame messages themselves (a WebSocket text
 * frame, an HTTP body). Each `write` is one whole frame. A frame over `maxMessageSize` is not
 * parsed: it yields a `FrameTooLargeError` with its size and the id read from its ends; nor is one
 * that breaks the structure limits (`maxDepth`, `maxMembers`): a `StructureLimitError`.
 */
export const json: Codec = {
  name: 'json',
  createDecoder: (emit, options) => {
    const limit = options?.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE
    const structure = limitsOf(options)
    return {
      write: frame => emit(decodeJsonFrame(frame, limit, structure)),
      end: () => {},
    }
  },
  encode: payload => JSON.stringify(payload),
}

/** Shared: `decode` without `stream` keeps no state between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes one whole frame: size-limited, UTF-8 checked, bounded in depth and members (see
 * {@link StructureLimits}; default `STRUCTURE_DEFAULTS`), JSON parsed.
 * @example
 * decodeJsonFrame('{"jsonrpc":"2.0","method":"ping","id":1}') // { type: 'message', message: {...} }
 */
export function decodeJsonFrame(frame: Uint8Array | string, maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE, limits?: StructureLimits): Decoded {
  const structure = limitsOf(limits)
  if (typeof frame === 'string') {
    // A string's UTF-8 size is at most 3 bytes per UTF-16 unit; measure exactly only when close.
    if (frame.length * 3 > maxMessageSize) {
      const size = utf8Length(frame)
      if (size > maxMessageSize) {
        const encoder = new TextEncoder()
        const { id, kind } = readFrameHead(encoder.encode(frame.slice(0, FRAME_HEAD_BYTES)), encoder.encode(frame.slice(-FRAME_TAIL_BYTES).trimEnd()))
        return { type: 'invalid', error: new FrameTooLargeError(maxMessageSize, undefined, { size, id, kind }) }
      }
    }
    return parseJsonText(frame, structure)
  }
  if (frame.length > maxMessageSize) {
    const { id, kind } = readFrameHead(frame.subarray(0, FRAME_HEAD_BYTES), trimEnd(frame.subarray(-FRAME_TAIL_BYTES)))
    return { type: 'invalid', error: new FrameTooLargeError(maxMessageSize, undefined, { size: frame.length, id, kind }) }
  }
  return decodeJsonText(frame, UTF8, structure)
}

/** UTF-8 length of a string without encoding it. */
function utf8Length(text: string): number {
  let size = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) size += 1
    else if (unit < 0x800) size += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { size += 4; i++ }
    else size += 3
  }
  return size
}

function trimEnd(bytes: Uint8Array): Uint8Array {
  let end = bytes.length
  while (end > 0 && (bytes[end - 1] === 0x20 || bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d || bytes[end - 1] === 0x09)) end--
  return bytes.subarray(0, end)
}
