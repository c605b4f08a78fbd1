import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { jsonLines } from '../../../lib/codec/json-lines.ts'
import { FrameTooLargeError, ParseError } from '../../../lib/jsonrpc/errors.ts'
import type { Decoded } from '../../../lib/transport.ts'

const bytes = (text: string) => new TextEncoder().encode(text)

function decodeChunks(chunks: (Uint8Array | string)[], maxMessageSize?: number): Decoded[] {
  const out: Decoded[] = []
  const decoder = jsonLines.createDecoder(item => out.push(item), { maxMessageSize })
  for (const chunk of chunks) decoder.write(chunk)
  decoder.end()
  return out
}

const messages = (items: Decoded[]) => items.map(item => item.type === 'message' ? item.message : item.error.constructor.name)

describe('jsonLines', () => {
  const fixture = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"héllo ☃ 😀"}}\r\n\n   \n{"a":[1,2,3]}\n'
  const expected = [
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/message', params: { data: 'héllo ☃ 😀' } },
    { a: [1, 2, 3] },
  ]

  it('decodes lines, dropping \\r and blank lines', () => {
    expect(messages(decodeChunks([bytes(fixture)]))).toEqual(expected)
  })

  it('decodes the same whatever offset the bytes are split at, even inside a character', () => {
    const all = bytes(fixture)
    for (let offset = 0; offset <= all.length; offset++) {
      expect(messages(decodeChunks([all.subarray(0, offset), all.subarray(offset)]))).toEqual(expected)
    }
  })

  it('decodes byte by byte', () => {
    const all = bytes(fixture)
    expect(messages(decodeChunks(Array.from(all, byte => new Uint8Array([byte]))))).toEqual(expected)
  })

  it('flushes a last line without a newline on end', () => {
    expect(messages(decodeChunks(['{"x":1}']))).toEqual([{ x: 1 }])
  })

  it('reports one FrameTooLargeError for an oversized line, in one chunk or many, and decodes the next line', () => {
    const big = `{"x":"${'y'.repeat(100)}"}`
    expect(messages(decodeChunks([`${big}\n{"ok":1}\n`], 50))).toEqual(['FrameTooLargeError', { ok: 1 }])
    const pieces = [big.slice(0, 40), big.slice(40, 80), big.slice(80), '\n{"ok":2}\n']
    const out = decodeChunks(pieces, 50)
    expect(messages(out)).toEqual(['FrameTooLargeError', { ok: 2 }])
    expect((out[0] as unknown as { error: FrameTooLargeError }).error.limit).toBe(50)
  })

  it('reports invalid UTF-8 and invalid JSON as ParseError and goes on', () => {
    const out = decodeChunks([new Uint8Array([0xc3, 0x28, 0x0a]), '{"a":\n', '{"b":2}\n'])
    expect(messages(out)).toEqual(['ParseError', 'ParseError', { b: 2 }])
    expect((out[0] as { error: ParseError }).error.code).toBe(-32700)
  })

  it('refuses only the line with invalid UTF-8 among the lines of one chunk', () => {
    const chunk = new Uint8Array([...bytes('{"a":1}\n'), 0xc3, 0x28, 0x0a, ...bytes('{"b":2}\n{"c":3}\n')])
    expect(messages(decodeChunks([chunk]))).toEqual([{ a: 1 }, 'ParseError', { b: 2 }, { c: 3 }])
  })

  it('drops one byte order mark at the start of a line (after spaces), in one chunk or line by line', () => {
    const text = '\ufeff{"a":1}\n  \ufeff{"b":2}\n\ufeff\ufeff{"c":3}\n{"d":4}\n'
    const expected = [{ a: 1 }, { b: 2 }, 'ParseError', { d: 4 }]
    expect(messages(decodeChunks([bytes(text)]))).toEqual(expected)
    expect(messages(decodeChunks(text.split(/(?<=\n)/).map(bytes)))).toEqual(expected)
  })

  it('does not overflow the stack on deep nesting: refuses it before parsing', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    expect(() => decodeChunks([deep + '\n'], 1 << 20)).not.toThrow()
    expect(messages(decodeChunks([deep + '\n'], 1 << 20))).toEqual(['StructureLimitError'])
    expect(messages(decodeChunks(['['.repeat(100_000) + '\n'], 1 << 20))).toEqual(['StructureLimitError'])
    expect(messages(decodeChunks(['"' + '['.repeat(100_000) + '\n'], 1 << 20))).toEqual(['ParseError'])
  })

  it('encodes one payload as one line', () => {
    expect(jsonLines.encode({ jsonrpc: '2.0', method: 'x', params: { text: 'a\nb' } })).toBe('{"jsonrpc":"2.0","method":"x","params":{"text":"a\\nb"}}\n')
  })

  it('round-trips any JSON value through encode and randomly chunked decoding', () => {
    fc.assert(fc.property(fc.array(fc.jsonValue(), { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 8 }), (values, cuts) => {
      const all = bytes(values.map(value => jsonLines.encode(value as never) as string).join(''))
      const offsets = [...new Set(cuts.map(cut => cut % (all.length + 1)))].sort((a, b) => a - b)
      const chunks: Uint8Array[] = []
      let start = 0
      for (const offset of offsets) { chunks.push(all.subarray(start, offset)); start = offset }
      chunks.push(all.subarray(start))
      // JSON has no -0 and no undefined: compare with what a JSON round trip gives.
      expect(messages(decodeChunks(chunks))).toEqual(values.map(value => JSON.parse(JSON.stringify(value))))
    }), { numRuns: 300 })
  })

  it('never throws on arbitrary bytes in arbitrary chunks', () => {
    fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 10 }), chunks => {
      const out = decodeChunks(chunks, 32)
      for (const item of out) expect(['message', 'invalid']).toContain(item.type)
    }), { numRuns: 500 })
  })
  describe('an oversized line', () => {
    const big = 'y'.repeat(5000)
    const tooLarge = (items: Decoded[]) => items.filter(item => item.type === 'invalid').map(item => {
      const error = item.error as FrameTooLargeError
      return { name: error.name, size: error.size, limit: error.limit, id: error.id, kind: error.kind }
    })

    it.each([
      ['a request, id near the start', `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"text":"${big}"}}`, { id: 7, kind: 'request' }],
      ['a response, id near the start', `{"jsonrpc":"2.0","id":"r-1","result":{"text":"${big}"}}`, { id: 'r-1', kind: 'response' }],
      ['a response written result first, id at the end', `{"result":{"text":"${big}"},"jsonrpc":"2.0","id":42}`, { id: 42, kind: 'response' }],
      ['a notification', `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${big}"}}`, { id: undefined, kind: 'request' }],
      ['a batch', `[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${big}"}}]`, { id: undefined, kind: undefined }],
      ['a nested id only', `{"jsonrpc":"2.0","result":{"id":9,"text":"${big}","id2":{"id":3}}}`, { id: undefined, kind: 'response' }],
    ])('names its size and limit and reads the id of %s from its ends', (_name, line, expected) => {
      const size = bytes(line).length
      const whole = decodeChunks([`${line}\n{"ok":1}\n`], 1000)
      expect(tooLarge(whole)).toEqual([{ name: 'FrameTooLargeError', size, limit: 1000, ...expected }])
      expect(whole.at(-1)).toEqual({ type: 'message', message: { ok: 1 } })
      // The same, fed in chunks of 999 bytes, and with \r\n.
      const all = bytes(`${line}\r\n`)
      const chunks: Uint8Array[] = []
      for (let at = 0; at < all.length; at += 999) chunks.push(all.subarray(at, at + 999))
      expect(tooLarge(decodeChunks(chunks, 1000))).toEqual([{ name: 'FrameTooLargeError', size: size + 1, limit: 1000, ...expected }])
    })

    it('reads the same id, kind and size whatever offset the line is split at', () => {
      const line = `{"jsonrpc":"2.0","id":"é-1","method":"m","params":{"a":"${'z'.repeat(120)}"}}\n{"ok":1}\n`
      const all = bytes(line)
      for (let offset = 0; offset <= all.length; offset++) {
        const out = decodeChunks([all.subarray(0, offset), all.subarray(offset)], 100)
        expect(tooLarge(out)).toEqual([{ name: 'FrameTooLargeError', size: all.length - 10, limit: 100, id: 'é-1', kind: 'request' }])
        expect(out.at(-1)).toEqual({ type: 'message', message: { ok: 1 } })
      }
    })

    it('reports a line cut off by the end of input too', () => {
      const line = `{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":"${big}`
      expect(tooLarge(decodeChunks([line], 100))).toEqual([{ name: 'FrameTooLargeError', size: line.length, limit: 100, id: 5, kind: 'request' }])
    })

    it('keeps at most the head and the tail of the line, whatever its size', () => {
      // 64 MiB of skipped bytes in 1 MiB chunks: only the counters move.
      const out: Decoded[] = []
      const decoder = jsonLines.createDecoder(item => out.push(item), { maxMessageSize: 1024 })
      const chunk = new Uint8Array(1 << 20).fill(0x61)
      decoder.write('{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"')
      for (let i = 0; i < 64; i++) decoder.write(chunk)
      decoder.write('"}}\n')
      expect(tooLarge(out)).toEqual([{ name: 'FrameTooLargeError', size: 64 * (1 << 20) + 55, limit: 1024, id: 1, kind: 'request' }])
    })
  })
})
