import type { RequestId } from '../jsonrpc/message.ts'
import { isRequestId } from '../jsonrpc/guards.ts'

/** Bytes of an oversized frame's start that {@link readFrameHead} looks at. */
export const FRAME_HEAD_BYTES = 4096
/** Bytes of an oversized frame's end that {@link readFrameHead} looks at. */
export const FRAME_TAIL_BYTES = 512

/** What the ends of an oversized JSON frame say about it. */
export interface FrameHead {
  /** The top-level `"id"`, when one was found. */
  id?: RequestId
  /** `'request'` after a top-level `method` or `params`, `'response'` after `result` or `error`. */
  kind?: 'request' | 'response'
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
/** Longest key or string id read; anything longer is not an id worth answering to. */
const MAX_TOKEN = 256

/**
 * Reads the id and the kind of a JSON-RPC message from the first and last bytes of a frame too
 * large to parse, without parsing it: a bounded scan (at most {@link FRAME_HEAD_BYTES} of `head`
 * and {@link FRAME_TAIL_BYTES} of `tail`), so the cost does not grow with the frame.
 *
 * The head is walked as JSON tokens, keeping track of depth and strings, and only top-level keys
 * count. The tail is used for an id written last (`…,"id":7}` is how the official SDK writes its
 * responses): the frame must end with the id's value and one closing brace, which only the
 * top-level object can. A batch (`[`) or anything unreadable yields `{}`.
 * @example
 * readFrameHead(bytesOf('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"…')) // { id: 7, kind: 'request' }
 */
export function readFrameHead(head: Uint8Array, tail?: Uint8Array): FrameHead {
  const found: FrameHead = {}
  scanHead(head.subarray(0, FRAME_HEAD_BYTES), found)
  if (found.id === undefined && tail !== undefined) {
    const id = idAtEnd(tail.subarray(Math.max(0, tail.length - FRAME_TAIL_BYTES)))
    if (id !== undefined) found.id = id
  }
  return found
}

function scanHead(bytes: Uint8Array, found: FrameHead): void {
  let i = skipSpace(bytes, 0)
  if (bytes[i] !== OPEN_BRACE) return
  i++
  // Depth of nesting: 1 is inside the top-level object, where keys are read.
  let depth = 1
  // At depth 1: true where a key may start (after `{` or `,`), false while in a value.
  let isKeyNext = true
  // The last top-level key read, waiting for its value.
  let key: string | undefined
  while (i < bytes.length && depth > 0) {
    const byte = bytes[i]!
    if (byte === QUOTE) {
      const end = stringEnd(bytes, i)
      if (end < 0) return
      if (depth === 1 && isKeyNext) {
        key = end - i <= MAX_TOKEN ? decodeString(bytes.subarray(i, end + 1)) : undefined
        isKeyNext = false
      } else if (depth === 1 && key === 'id') {
        const id = end - i <= MAX_TOKEN ? decodeString(bytes.subarray(i, end + 1)) : undefined
        if (id !== undefined) found.id = id
        key = undefined
      }
      i = end + 1
      continue
    }
    if (depth === 1 && byte === COLON && key !== undefined) {
      if (key === 'method' || key === 'params') found.kind ??= 'request'
      else if (key === 'result' || key === 'error') found.kind ??= 'response'
      if (key !== 'id') key = undefined
      i = skipSpace(bytes, i + 1)
      if (key === 'id' && i < bytes.length && bytes[i] !== QUOTE) {
        // A number: read to its end; JSON.parse rejects anything that is not one.
        let end = i
        while (end < bytes.length && end - i <= MAX_TOKEN && isNumberByte(bytes[end]!)) end++
        if (end < bytes.length) {
          const id = parseJson(new TextDecoder().decode(bytes.subarray(i, end)))
          if (isRequestId(id)) found.id = id
        }
        key = undefined
        i = end
      }
      continue
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--
    else if (byte === COMMA && depth === 1) { isKeyNext = true; key = undefined }
    i++
  }
}

/** The id of a frame ending in `"id": <number or string> }`, the last member of the top-level object. */
function idAtEnd(bytes: Uint8Array): RequestId | undefined {
  const text = new TextDecoder().decode(bytes)
  const match = /[{,]\s*"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(text)
  if (match === null) return undefined
  const id = parseJson(match[1]!)
  return isRequestId(id) ? id : undefined
}

/** Index of the quote closing the string that starts at `start`, or -1 when it runs past the bytes. */
function stringEnd(bytes: Uint8Array, start: number): number {
  for (let i = start + 1; i < bytes.length; i++) {
    const byte = bytes[i]!
    if (byte === BACKSLASH) i++
    else if (byte === QUOTE) return i
  }
  return -1
}

function decodeString(quoted: Uint8Array): string | undefined {
  const value = parseJson(new TextDecoder().decode(quoted))
  return typeof value === 'string' ? value : undefined
}

function parseJson(text: string): unknown {
  try { return JSON.parse(text) } catch { return undefined }
}

function skipSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++
  return i
}

function isNumberByte(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45
}
