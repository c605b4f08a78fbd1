import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { FRAME_HEAD_BYTES, readFrameHead } from '../../../lib/codec/frame-head.ts'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('readFrameHead', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{', { id: 7, kind: 'request' }],
    [' { "id" : -12 , "method" : "m"', { id: -12, kind: 'request' }],
    ['{"id":"a\\"b","error":{"code":1', { id: 'a"b', kind: 'response' }],
    ['{"params":{"id":1,"x":[{"id":2}]},"id":"after","method":"x"', { id: 'after', kind: 'request' }],
    ['{"result":{"id":5', { kind: 'response' }],
    ['{"jsonrpc":"2.0","id":1e400,"method":"m"', { kind: 'request' }],
    ['{"jsonrpc":"2.0","id":null,"method":"m"', { kind: 'request' }],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"m"', { kind: 'request' }],
    ['{"text":"\\"id\\":4","id":3,"result":{', { id: 3, kind: 'response' }],
    ['{"jsonrpc":"2.0","id":12', {}],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"}', {}],
    ['not json at all', {}],
  ])('reads %s', (head, expected) => {
    expect(readFrameHead(bytes(head))).toEqual(expected)
  })

  it.each([
    ['"x"},"jsonrpc":"2.0","id":42}', { id: 42 }],
    ['"x"},"id":"q-1"}  ', { id: 'q-1' }],
    ['"x","id":5}}', {}],
    ['"x"},"id":1e400}', {}],
    ['"\\"id\\":3}"}', {}],
  ])('reads an id written last from the tail %s', (tail, expected) => {
    expect(readFrameHead(bytes('{"result":{"a":'), bytes(tail.trimEnd()))).toEqual({ kind: 'response', ...expected })
  })

  it(`looks at no more than the first ${FRAME_HEAD_BYTES} bytes`, () => {
    const padding = `{"params":{"a":"${'x'.repeat(FRAME_HEAD_BYTES)}"},"id":1,"method":"m"}`
    expect(readFrameHead(bytes(padding))).toEqual({ kind: 'request' })
  })

  it('never throws on arbitrary bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 }), (head, tail) => {
      const found = readFrameHead(head, tail)
      if (found.id !== undefined) expect(['string', 'number']).toContain(typeof found.id)
    }), { numRuns: 500 })
  })
})
