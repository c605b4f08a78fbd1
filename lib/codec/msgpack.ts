import type { Packr } from 'msgpackr'
import type { Codec } from './codec.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from './codec.ts'
import type { Inbound } from '../transport.ts'
import type { JsonRpcPayload } from '../jsonrpc/message.ts'
import { FrameTooLargeError, ParseError, TransportError } from '../jsonrpc/errors.ts'

/**
 * msgpackr set up so that a JSON value comes back as the same JSON value: plain objects (no
 * records, no Maps), no extension types (no Dates), numbers as numbers. 64-bit integers are read as
 * numbers, which is exact because {@link findNonJson} has refused any beyond the safe range. One exception, kept on purpose: msgpackr renames an own
 * `__proto__` key (to `__proto_`) rather than risk prototype pollution.
 */
let packr: Packr | undefined
/** The one load of msgpackr in progress or done, shared by every caller. */
let loading: Promise<void> | undefined

/**
 * Loads msgpackr, an optional peer dependency that only the msgpack WebSocket subprotocol needs:
 * call it (the WebSocket transports do) before {@link encodeMsgpack} or {@link decodeMsgpackFrame}.
 * Resolves at once after the first load; rejects with a TransportError saying what to install when
 * msgpackr is not installed.
 */
export function loadMsgpack(): Promise<void> {
  loading ??= import('msgpackr').then(
    module => { packr = new module.Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, bundleStrings: false, int64AsType: 'number' }) },
    (error: unknown) => {
      loading = undefined
      throw new TransportError('msgpack needs the optional peer dependency msgpackr: npm install msgpackr', { cause: error })
    })
  return loading
}

/** True once {@link loadMsgpack} has loaded msgpackr. */
export function isMsgpackLoaded(): boolean {
  return packr !== undefined
}

function loadedPackr(): Packr {
  if (packr === undefined) throw new TransportError('msgpack is not loaded: await loadMsgpack() first')
  return packr
}

/**
 * Encodes one payload as msgpack bytes holding only JSON values, as JSON text would carry it.
 *
 * msgpackr writes some values as extension types (`undefined`, a Date, an Error, an object with
 * `toJSON`), which {@link decodeMsgpackFrame} refuses on the other side. So the bytes are checked
 * (one linear pass), and a payload that needed extensions is encoded again from what
 * `JSON.stringify` makes of it: `toJSON` called, `undefined` left out. That slow path runs only
 * for such payloads; what JSON cannot encode (a cycle, a BigInt) throws, as with JSON.
 */
export function encodeMsgpack(payload: JsonRpcPayload): Uint8Array {
  const packer = loadedPackr()
  const bytes = packer.pack(payload)
  return findNonJson(bytes) === undefined ? bytes : packer.pack(JSON.parse(JSON.stringify(payload)))
}

/**
 * Decodes one msgpack frame into an {@link Inbound}: size-limited, malformed bytes as ParseError.
 *
 * Only JSON values come out. Before msgpackr sees the frame, one linear pass over its bytes
 * refuses (as ParseError, -32700) what has no JSON form: extension types (msgpackr would make
 * Dates, Sets, RegExps, Errors, BigInts, typed arrays or records of them), binary strings, map
 * keys that are not strings, NaN and infinities, integers beyond `Number.MAX_SAFE_INTEGER`, and
 * bytes after the value. A uint64 or int64 that fits a safe integer is a number.
 */
export function decodeMsgpackFrame(frame: Uint8Array, maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE): Inbound {
  const packer = loadedPackr()
  if (frame.length > maxMessageSize) return { type: 'invalid', error: new FrameTooLargeError(maxMessageSize, undefined, { size: frame.length }) }
  const refusal = findNonJson(frame)
  if (refusal !== undefined) return { type: 'invalid', error: new ParseError(`Parse error: invalid msgpack (${refusal})`) }
  try {
    return { type: 'message', message: packer.unpack(frame) }
  } catch (error) {
    return { type: 'invalid', error: new ParseError(`Parse error: invalid msgpack (${error instanceof Error ? error.message : 'unknown'})`) }
  }
}

/**
 * Walks the msgpack structure of `bytes` without building values: what makes it something other
 * than one JSON value, or undefined when it is one. Iterative (an explicit stack), so depth costs
 * memory, never the call stack; every step consumes at least one byte, so the walk is linear.
 */
export function findNonJson(bytes: Uint8Array): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  // Items still to read in each open array or map (a map counts keys and values), innermost last.
  const remaining: number[] = []
  // Whether each open container is a map, so its even items are keys.
  const isMap: boolean[] = []
  let at = 0
  do {
    if (at >= bytes.length) return 'truncated'
    const depth = remaining.length - 1
    const isKey = depth >= 0 && isMap[depth]! && remaining[depth]! % 2 === 0
    if (depth >= 0) remaining[depth]!--
    const type = bytes[at++]!
    // Bytes of data after the type (and its length field), and items of a container.
    let length = 0
    let children = 0
    let isChildMap = false
    let isString = false
    if (type <= 0x7f || type >= 0xe0) length = 0
    else if (type <= 0x8f) { children = (type & 0x0f) * 2; isChildMap = true }
    else if (type <= 0x9f) children = type & 0x0f
    else if (type <= 0xbf) { length = type & 0x1f; isString = true }
    else {
      if (at + SIZES[type - 0xc0]! > bytes.length) return 'truncated'
      switch (type) {
        case 0xc0: case 0xc2: case 0xc3: break
        case 0xc1: return 'reserved byte 0xc1'
        case 0xc4: case 0xc5: case 0xc6: return 'binary data is not a JSON value'
        case 0xc7: case 0xc8: case 0xc9: case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
          return 'extension types are not JSON values'
        case 0xca: if (!Number.isFinite(view.getFloat32(at))) return 'NaN and infinities are not JSON values'; length = 4; break
        case 0xcb: if (!Number.isFinite(view.getFloat64(at))) return 'NaN and infinities are not JSON values'; length = 8; break
        case 0xcc: case 0xd0: length = 1; break
        case 0xcd: case 0xd1: length = 2; break
        case 0xce: case 0xd2: length = 4; break
        case 0xcf: if (view.getBigUint64(at) > MAX_SAFE) return 'integer beyond the safe range'; length = 8; break
        case 0xd3: { const value = view.getBigInt64(at); if (value > MAX_SAFE || value < -MAX_SAFE) return 'integer beyond the safe range'; length = 8; break }
        case 0xd9: length = bytes[at]!; at += 1; isString = true; break
        case 0xda: length = view.getUint16(at); at += 2; isString = true; break
        case 0xdb: length = view.getUint32(at); at += 4; isString = true; break
        case 0xdc: children = view.getUint16(at); at += 2; break
        case 0xdd: children = view.getUint32(at); at += 4; break
        case 0xde: children = view.getUint16(at) * 2; at += 2; isChildMap = true; break
        case 0xdf: children = view.getUint32(at) * 2; at += 4; isChildMap = true; break
      }
    }
    if (isKey && !isString) return 'map keys must be strings'
    at += length
    // Every item takes at least a byte: a count the bytes left cannot hold is a lie.
    if (children > bytes.length - at) return 'truncated'
    if (children > 0) { remaining.push(children); isMap.push(isChildMap); continue }
    // This item may complete its containers, and theirs.
    while (remaining.length > 0 && remaining[remaining.length - 1] === 0) { remaining.pop(); isMap.pop() }
  } while (remaining.length > 0)
  if (at > bytes.length) return 'truncated'
  if (at !== bytes.length) return 'bytes after the value'
  return undefined
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
/** Bytes that follow each type byte from 0xc0 up before its data (the fixed part to bounds-check). */
const SIZES = [
  0, 0, 0, 0, 1, 2, 4, 1, 2, 4, 4, 8, 1, 2, 4, 8, // c0-cf
  1, 2, 4, 8, 2, 3, 5, 9, 17, 1, 2, 4, 2, 4, 2, 4, // d0-df
]

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
