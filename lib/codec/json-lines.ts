import type { Codec, Decoder } from './codec.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from './codec.ts'
import type { Inbound } from '../transport.ts'
import type { JsonRpcPayload } from '../jsonrpc/message.ts'
import { FrameTooLargeError, ParseError } from '../jsonrpc/errors.ts'

const NEWLINE = 0x0a
const CARRIAGE_RETURN = 0x0d

/**
 * Newline-delimited JSON, the stdio framing of MCP: one message per line, no embedded newlines.
 *
 * The decoder takes chunks split anywhere (mid-line, mid-character) and looks at each byte once:
 * it scans only new bytes for `\n` and keeps the pieces of an unfinished line in a list, joined
 * once when the line ends. A line longer than `maxMessageSize` yields one `FrameTooLargeError` and
 * is skipped to its end without being kept; invalid UTF-8 and invalid JSON yield a `ParseError`.
 * Blank lines are ignored; a trailing `\r` is dropped.
 *
 * @example
 * const decoder = jsonLines.createDecoder(item => inbound.next(item), { maxMessageSize: 1 << 20 })
 * stdin.on('data', chunk => decoder.write(chunk))
 */
export const jsonLines: Codec = {
  name: 'json-lines',
  createDecoder: (emit, options) => new JsonLinesDecoder(emit, options?.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE),
  encode: encodeLine,
}

/** One payload as one line of JSON text, newline included. */
export function encodeLine(payload: JsonRpcPayload): string {
  return JSON.stringify(payload) + '\n'
}

/** Decodes one frame's worth of UTF-8 JSON text into an {@link Inbound}. */
export function decodeJsonText(bytes: Uint8Array, decoder: TextDecoder): Inbound {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return { type: 'invalid', error: new ParseError('Parse error: invalid UTF-8') }
  }
  try {
    return { type: 'message', message: JSON.parse(text) }
  } catch (error) {
    return { type: 'invalid', error: new ParseError(`Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`) }
  }
}

class JsonLinesDecoder implements Decoder {
  readonly #emit: (item: Inbound) => void
  readonly #limit: number
  readonly #text = new TextDecoder('utf-8', { fatal: true })
  /** Pieces of the line not yet ended, in order. */
  #pieces: Uint8Array[] = []
  /** Bytes held in `#pieces`. */
  #pending = 0
  /** True while skipping the rest of an oversized line. */
  #isSkipping = false

  constructor(emit: (item: Inbound) => void, limit: number) {
    this.#emit = emit
    this.#limit = limit
  }

  write(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk
    let start = 0
    while (start < bytes.length) {
      const end = bytes.indexOf(NEWLINE, start)
      if (end < 0) {
        this.#keep(bytes.subarray(start))
        return
      }
      if (this.#isSkipping) {
        this.#isSkipping = false
      } else if (this.#pending + (end - start) > this.#limit) {
        this.#tooLarge()
        this.#isSkipping = false
      } else {
        this.#line(this.#pending === 0 ? bytes.subarray(start, end) : this.#join(bytes.subarray(start, end)))
      }
      start = end + 1
    }
  }

  end(): void {
    if (this.#pending > 0 && !this.#isSkipping) this.#line(this.#join(new Uint8Array(0)))
    this.#pieces = []
    this.#pending = 0
    this.#isSkipping = false
  }

  #keep(piece: Uint8Array): void {
    if (this.#isSkipping) return
    if (this.#pending + piece.length > this.#limit) {
      this.#tooLarge()
      this.#isSkipping = true
      return
    }
    // The chunk's buffer may be reused by the stream, so keep a copy of the unfinished part.
    this.#pieces.push(piece.slice())
    this.#pending += piece.length
  }

  #tooLarge(): void {
    this.#pieces = []
    this.#pending = 0
    this.#emit({ type: 'invalid', error: new FrameTooLargeError(this.#limit) })
  }

  #join(last: Uint8Array): Uint8Array {
    const line = new Uint8Array(this.#pending + last.length)
    let offset = 0
    for (const piece of this.#pieces) { line.set(piece, offset); offset += piece.length }
    line.set(last, offset)
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
    this.#emit(decodeJsonText(start === 0 && end === line.length ? line : line.subarray(start, end), this.#text))
  }
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === CARRIAGE_RETURN
}
