import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { jsonLines } from '../../../lib/codec/json-lines.ts'
import { FrameTooLargeError, ParseError } from '../../../lib/jsonrpc/errors.ts'
import type { Inbound } from '../../../lib/transport.ts'

const bytes = (text: string) => new TextEncoder().encode(text)

function decodeChunks(chunks: (Uint8Array | string)[], maxMessageSize?: number): Inbound[] {
  const out: Inbound[] = []
  const decoder = jsonLines.createDecoder(item => out.push(item), { maxMessageSize })
  for (const chunk of chunks) decoder.write(chunk)
  decoder.end()
  return out
}

const messages = (items: Inbound[]) => items.map(item => item.type === 'message' ? item.message : item.error.constructor.name)

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

  it('does not overflow the stack on deep nesting', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    expect(() => decodeChunks([deep + '\n'], 1 << 20)).not.toThrow()
    expect(messages(decodeChunks(['['.repeat(100_000) + '\n'], 1 << 20))).toEqual(['ParseError'])
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
})
