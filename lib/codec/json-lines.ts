import type { Codec, Decoder } from './codec.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from './codec.ts'
import type { Decoded, Inbound } from '../transport.ts'
import type { JsonRpcPayload } from '../jsonrpc/message.ts'
import { FrameTooLargeError, ParseError, StructureLimitError } from '../jsonrpc/errors.ts'
import { FRAME_HEAD_BYTES, FRAME_TAIL_BYTES, readFrameHead } from './frame-head.ts'
import { STRUCTURE_DEFAULTS, exceededBound, limitsOf, type StructureLimits } from './structure.ts'

const NEWLINE = 0x0a
const CARRIAGE_RETURN = 0x0d
const BYTE_ORDER_MARK = 0xfeff

/**
 * Newline-delimited JSON, the stdio framing of MCP: one message per line, no embedded newlines.
 *
 * The decoder takes chunks split anywhere (mid-line, mid-character) and looks at each byte once:
 * it scans only new bytes for `\n` and keeps the pieces of an unfinished line in a list, joined
 * once when the line ends. A line longer than `maxMessageSize` is skipped to its end without being
 * kept, and then yields one `FrameTooLargeError` naming its size, with the id and kind read from
 * its first and last bytes when they show them (see `readFrameHead`); invalid UTF-8 and invalid
 * JSON yield a `ParseError`, and a line nested deeper than `maxDepth` or holding more than
 * `maxMembers` members (see `StructureLimits`) a `StructureLimitError`, with its id when readable.
 * Blank lines are ignored; a trailing `\r` is dropped.
 *
 * @example
 * const decoder = jsonLines.createDecoder(item => inbound.next(item), { maxMessageSize: 1 << 20 })
 * stdin.on('data', chunk => decoder.write(chunk))
 */
export const jsonLines: Codec = {
  name: 'json-lines',
  createDecoder: (emit, options) => new JsonLinesDecoder(emit, options?.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE, limitsOf(options)),
  encode: encodeLine,
}

/** One payload as one line of JSON text, newline included. */
export function encodeLine(payload: JsonRpcPayload): string {
  return JSON.stringify(payload) + '\n'
}

/** Decodes one frame's worth of UTF-8 JSON text into an {@link Inbound}, within `limits` (see {@link parseJsonText}). */
export function decodeJsonText(bytes: Uint8Array, decoder: TextDecoder, limits: Required<StructureLimits> = STRUCTURE_DEFAULTS): Decoded {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return { type: 'invalid', error: new ParseError('Parse error: invalid UTF-8') }
  }
  return parseJsonText(text, limits)
}

/**
 * Parses one message's JSON text into an {@link Inbound}: invalid JSON is a `ParseError`, and a text
 * that breaks `limits` is refused before it is parsed (`exceededBound`) with a `StructureLimitError`
 * carrying the id and kind read from its first and last bytes (`readFrameHead`).
 */
export function parseJsonText(text: string, limits: Required<StructureLimits> = STRUCTURE_DEFAULTS): Decoded {
  const bound = exceededBound(text, limits.maxDepth, limits.maxMembers)
  if (bound !== undefined) {
    const encoder = new TextEncoder()
    const { id, kind } = readFrameHead(encoder.encode(text.slice(0, FRAME_HEAD_BYTES)), encoder.encode(text.slice(-FRAME_TAIL_BYTES).trimEnd()))
    return { type: 'invalid', error: new StructureLimitError(bound, limits[bound], { id, kind }) }
  }
  try {
    return { type: 'message', message: JSON.parse(text) }
  } catch (error) {
    return { type: 'invalid', error: new ParseError(`Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`) }
  }
}

class JsonLinesDecoder implements Decoder {
  readonly #emit: (item: Decoded) => void
  readonly #limit: number
  /** Bounds on each line's nesting and members. */
  readonly #structure: Required<StructureLimits>
  readonly #text = new TextDecoder('utf-8', { fatal: true })
  /** Decodes several lines at once: a byte order mark is dropped per line by `#chunkLines`, not here. */
  readonly #chunkText = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  /** Pieces of the line not yet ended, in order. */
  #pieces: Uint8Array[] = []
  /** Bytes held in `#pieces`. */
  #pending = 0
  /** True while skipping the rest of an oversized line. */
  #isSkipping = false
  /** While skipping: the first bytes of the oversized line (at most FRAME_HEAD_BYTES), kept to read its id. */
  #head: Uint8Array = EMPTY
  /** While skipping: the last bytes seen of the oversized line (at most FRAME_TAIL_BYTES). */
  #tail: Uint8Array = EMPTY
  /** While skipping: the size of the oversized line so far. */
  #skipped = 0

  constructor(emit: (item: Decoded) => void, limit: number, structure: Required<StructureLimits>) {
    this.#emit = emit
    this.#limit = limit
    this.#structure = structure
  }

  write(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk
    let start = 0
    // The line begun by earlier chunks ends first, on its own.
    if (this.#pending > 0 || this.#isSkipping) {
      const end = bytes.indexOf(NEWLINE)
      if (end < 0) return this.#keep(bytes)
      this.#lines(bytes, 0, end + 1)
      start = end + 1
    }
    // The lines wholly inside this chunk are decoded with one call (most chunks hold several small
    // messages), unless one of them could pass the size limit; what follows the last newline is kept.
    const last = bytes.lastIndexOf(NEWLINE)
    if (last < start) {
      if (start < bytes.length) this.#keep(bytes.subarray(start))
      return
    }
    if (last - start <= this.#limit) this.#chunkLines(bytes, start, last)
    else this.#lines(bytes, start, last + 1)
    if (last + 1 < bytes.length) this.#keep(bytes.subarray(last + 1))
  }

  /** The lines of `bytes` from `start` to `end` (which is past a newline, or the chunk's end), one by one. */
  #lines(bytes: Uint8Array, start: number, end: number): void {
    while (start < end) {
      const newline = bytes.indexOf(NEWLINE, start)
      if (newline < 0 || newline >= end) {
        this.#keep(bytes.subarray(start, end))
        return
      }
      const piece = bytes.subarray(start, newline)
      if (this.#isSkipping) {
        this.#skip(piece)
        this.#tooLarge()
      } else if (this.#pending + piece.length > this.#limit) {
        this.#startSkipping(piece)
        this.#tooLarge()
      } else {
        this.#line(this.#pending === 0 ? piece : this.#join(piece))
      }
      start = newline + 1
    }
  }

  /**
   * Complete lines, none longer than the limit, from `start` to the newline at `last`, decoded as
   * one text and then split: what `#line` does to each, with one decoder call for all. Invalid
   * UTF-8 anywhere in them sends them through `#line` one by one, so only the bad line is refused.
   */
  #chunkLines(bytes: Uint8Array, start: number, last: number): void {
    let text: string
    try {
      text = this.#chunkText.decode(bytes.subarray(start, last))
    } catch {
      return this.#lines(bytes, start, last + 1)
    }
    const length = text.length
    let from = 0
    while (from <= length) {
      let to = text.indexOf('\n', from)
      if (to < 0) to = length
      let lineEnd = to
      if (lineEnd > from && text.charCodeAt(lineEnd - 1) === CARRIAGE_RETURN) lineEnd--
      let lineStart = from
      while (lineStart < lineEnd && isSpace(text.charCodeAt(lineStart))) lineStart++
      if (lineStart < lineEnd) {
        // `#line`'s decoder drops one byte order mark where the text starts; so does this.
        if (text.charCodeAt(lineStart) === BYTE_ORDER_MARK) lineStart++
        this.#emit(parseJsonText(lineStart === 0 && lineEnd === length ? text : text.slice(lineStart, lineEnd), this.#structure))
      }
      from = to + 1
    }
  }

  end(): void {
    if (this.#isSkipping) this.#tooLarge()
    else if (this.#pending > 0) this.#line(this.#join(new Uint8Array(0)))
    this.#pieces = []
    this.#pending = 0
  }

  #keep(piece: Uint8Array): void {
    if (this.#isSkipping) return this.#skip(piece)
    if (this.#pending + piece.length > this.#limit) return this.#startSkipping(piece)
    // The chunk's buffer may be reused by the stream, so keep a copy of the unfinished part.
    this.#pieces.push(piece.slice())
    this.#pending += piece.length
  }

  /** The line passed the limit: keep its first bytes (to read its id later) and drop the rest. */
  #startSkipping(piece: Uint8Array): void {
    this.#isSkipping = true
    this.#skipped = this.#pending
    this.#tail = EMPTY
    for (let i = this.#pieces.length - 1; i >= 0 && this.#tail.length < FRAME_TAIL_BYTES; i--) {
      this.#tail = concat(this.#pieces[i]!.subarray(-FRAME_TAIL_BYTES), this.#tail).slice(-FRAME_TAIL_BYTES)
    }
    this.#head = this.#join(EMPTY, FRAME_HEAD_BYTES)
    if (this.#head.length < FRAME_HEAD_BYTES) this.#head = concat(this.#head, piece.subarray(0, FRAME_HEAD_BYTES - this.#head.length))
    this.#skip(piece)
  }

  /** Counts a piece of an oversized line and keeps the end of what was seen. */
  #skip(piece: Uint8Array): void {
    this.#skipped += piece.length
    this.#tail = piece.length >= FRAME_TAIL_BYTES
      ? piece.slice(piece.length - FRAME_TAIL_BYTES)
      : concat(this.#tail, piece).slice(-FRAME_TAIL_BYTES)
  }

  /** The oversized line has ended: one FrameTooLargeError with its size and, if readable, its id. */
  #tooLarge(): void {
    const tail = this.#tail.length > 0 ? this.#tail : this.#head
    const { id, kind } = readFrameHead(this.#head, trimEnd(tail))
    const size = this.#skipped
    this.#isSkipping = false
    this.#head = EMPTY
    this.#tail = EMPTY
    this.#skipped = 0
    this.#emit({ type: 'invalid', error: new FrameTooLargeError(this.#limit, undefined, { size, id, kind }) })
  }

  /** The pieces kept so far and `last`, as one line (or only its first `max` bytes); empties the pieces. */
  #join(last: Uint8Array, max = Infinity): Uint8Array {
    const line = new Uint8Array(Math.min(this.#pending + last.length, max))
    let offset = 0
    for (const piece of [...this.#pieces, last]) {
      if (offset === line.length) break
      const part = piece.length <= line.length - offset ? piece : piece.subarray(0, line.length - offset)
      line.set(part, offset)
      offset += part.length
    }
    this.#pieces = []
    this.#pending = 0
    return line
  }

  #line(line: Uint8Array): void {
    let end = line.length
    if (end > 0 && line[end - 1] === CARRIAGE_RETURN) end--
    let start = 0
    // Blank (whitespace-only) lines carry nothing.
    while (start < end && isSpace(line[start]!)) start++
    if (start === end) return
    this.#emit(decodeJsonText(start === 0 && end === line.length ? line : line.subarray(start, end), this.#text, this.#structure))
  }
}

const EMPTY = new Uint8Array(0)

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/** Drops a trailing `\r` and spaces, so the tail ends where the JSON does. */
function trimEnd(bytes: Uint8Array): Uint8Array {
  let end = bytes.length
  while (end > 0 && (isSpace(bytes[end - 1]!) || bytes[end - 1] === NEWLINE)) end--
  return bytes.subarray(0, end)
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === CARRIAGE_RETURN
}
