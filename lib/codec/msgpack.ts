import type { Packr } from 'msgpackr'
import type { Codec } from './codec.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from './codec.ts'
import type { Decoded, Inbound } from '../transport.ts'
import type { JsonRpcPayload, RequestId } from '../jsonrpc/message.ts'
import { FrameTooLargeError, ParseError, StructureLimitError, TransportError, type StructureBound } from '../jsonrpc/errors.ts'
import { limitsOf, type StructureLimits } from './structure.ts'

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
 * bytes after the value. A uint64 or int64 that fits a safe integer is a number. The same pass
 * holds the frame to `limits` (default `STRUCTURE_DEFAULTS`: 128 levels, 100,000 members), as the
 * JSON codecs do: a frame past them is a `StructureLimitError` with the top-level id, when the
 * pass read one before the breach.
 */
export function decodeMsgpackFrame(frame: Uint8Array, maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE, limits?: StructureLimits): Decoded {
  const packer = loadedPackr()
  if (frame.length > maxMessageSize) return { type: 'invalid', error: new FrameTooLargeError(maxMessageSize, undefined, { size: frame.length }) }
  const structure = limitsOf(limits)
  const found: WalkFindings = {}
  const refusal = walk(frame, structure.maxDepth, structure.maxMembers, found)
  if (found.bound !== undefined) return { type: 'invalid', error: new StructureLimitError(found.bound, structure[found.bound], { id: found.id, kind: found.kind }) }
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
  return walk(bytes, Infinity, Infinity, undefined)
}

/** What {@link walk} tells beside its verdict: the bound broken, and the top-level id and kind read before. */
interface WalkFindings {
  bound?: StructureBound
  id?: RequestId
  kind?: 'request' | 'response'
}

/**
 * {@link findNonJson} with structure limits: a container nested deeper than `maxDepth`, or one
 * that brings the members (array elements and map entries) past `maxMembers`, stops the walk
 * with `found.bound` set. With `found`, the top-level map's `id` (a string or a number) and the
 * kind its keys show are kept as the walk passes them.
 */
function walk(bytes: Uint8Array, maxDepth: number, maxMembers: number, found: WalkFindings | undefined): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  // Items still to read in each open array or map (a map counts keys and values), innermost last.
  const remaining: number[] = []
  // Whether each open container is a map, so its even items are keys.
  const isMap: boolean[] = []
  // Array elements and map entries met so far.
  let members = 0
  // With `found`: the last key read in the top-level map, while its value is next.
  let topKey: string | undefined
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
    let isContainer = false
    let isChildMap = false
    let isString = false
    if (type <= 0x7f || type >= 0xe0) length = 0
    else if (type <= 0x8f) { children = (type & 0x0f) * 2; isChildMap = true; isContainer = true }
    else if (type <= 0x9f) { children = type & 0x0f; isContainer = true }
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
        case 0xdc: children = view.getUint16(at); at += 2; isContainer = true; break
        case 0xdd: children = view.getUint32(at); at += 4; isContainer = true; break
        case 0xde: children = view.getUint16(at) * 2; at += 2; isChildMap = true; isContainer = true; break
        case 0xdf: children = view.getUint32(at) * 2; at += 4; isChildMap = true; isContainer = true; break
      }
    }
    if (isKey && !isString) return 'map keys must be strings'
    if (found !== undefined && depth === 0 && isMap[0]!) {
      if (isKey) topKey = readTopKey(bytes, at, length, found)
      else if (topKey === 'id' && found.id === undefined) found.id = readId(bytes, view, type, at, length)
    }
    at += length
    // Every item takes at least a byte: a count the bytes left cannot hold is a lie.
    if (children > bytes.length - at) return 'truncated'
    if (isContainer) {
      // The container's level is one below the open ones; its members count before they are read.
      if (remaining.length + 1 > maxDepth) { if (found !== undefined) found.bound = 'maxDepth'; return 'nested too deep' }
      members += isChildMap ? children / 2 : children
      if (members > maxMembers) { if (found !== undefined) found.bound = 'maxMembers'; return 'too many members' }
    }
    if (children > 0) { remaining.push(children); isMap.push(isChildMap); continue }
    // This item may complete its containers, and theirs.
    while (remaining.length > 0 && remaining[remaining.length - 1] === 0) { remaining.pop(); isMap.pop() }
  } while (remaining.length > 0)
  if (at > bytes.length) return 'truncated'
  if (at !== bytes.length) return 'bytes after the value'
  return undefined
}

/** Longest top-level key or string id read while walking; anything longer is neither. */
const MAX_TOKEN = 256
/** Decodes the few top-level keys and string ids the walk reads. */
const UTF8 = new TextDecoder()

/** A top-level key (short ones only), noting the message's kind on the way. */
function readTopKey(bytes: Uint8Array, at: number, length: number, found: WalkFindings): string | undefined {
  if (length > 8 || at + length > bytes.length) return undefined
  const key = UTF8.decode(bytes.subarray(at, at + length))
  if (key === 'method' || key === 'params') found.kind ??= 'request'
  else if (key === 'result' || key === 'error') found.kind ??= 'response'
  return key
}

/** The id whose value starts at `at`: a string or a safe number, else undefined. */
function readId(bytes: Uint8Array, view: DataView, type: number, at: number, length: number): RequestId | undefined {
  if (at + length > bytes.length) return undefined
  if (type <= 0x7f) return type
  if (type >= 0xe0) return type - 0x100
  if ((type >= 0xa0 && type <= 0xbf) || type === 0xd9 || type === 0xda || type === 0xdb) {
    return length <= MAX_TOKEN ? UTF8.decode(bytes.subarray(at, at + length)) : undefined
  }
  switch (type) {
    case 0xcc: return view.getUint8(at)
    case 0xcd: return view.getUint16(at)
    case 0xce: return view.getUint32(at)
    case 0xcf: return Number(view.getBigUint64(at))
    case 0xd0: return view.getInt8(at)
    case 0xd1: return view.getInt16(at)
    case 0xd2: return view.getInt32(at)
    case 0xd3: return Number(view.getBigInt64(at))
    case 0xca: return view.getFloat32(at)
    case 0xcb: return view.getFloat64(at)
  }
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
    write: frame => emit(typeof frame === 'string' ? { type: 'invalid', error: new ParseError('Parse error: text frame on a msgpack connection') } : decodeMsgpackFrame(frame, options?.maxMessageSize, options)),
    end: () => {},
  }),
  encode: encodeMsgpack,
}
