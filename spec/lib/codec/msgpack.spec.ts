import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { decodeMsgpackFrame, encodeMsgpack } from '../../../lib/codec/msgpack.ts'

/** JSON values without the one key msgpackr renames on purpose. */
const json = fc.jsonValue().filter(value => !JSON.stringify(value).includes('"__proto__"'))

describe('msgpack', () => {
  it('round-trips arbitrary JSON-RPC messages unchanged', () => {
    const message = fc.oneof(
      fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string()), method: fc.string(), params: fc.dictionary(fc.string().filter(k => k !== '__proto__'), json) }),
      fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string()), result: fc.dictionary(fc.string().filter(k => k !== '__proto__'), json) }),
      fc.record({ jsonrpc: fc.constant('2.0'), method: fc.string() }),
    )
    fc.assert(fc.property(message, value => {
      const decoded = decodeMsgpackFrame(encodeMsgpack(value as never))
      expect(decoded).toEqual({ type: 'message', message: JSON.parse(JSON.stringify(value)) })
    }), { numRuns: 500 })
  })

  it('keeps nulls, big integers, floats and date-like strings as they are', () => {
    const value = { jsonrpc: '2.0', id: 1, result: { a: null, n: [2 ** 53 - 1, -(2 ** 31), 0.1, 1e300], when: '2025-11-25T00:00:00Z', nested: { empty: {}, list: [] } } }
    expect(decodeMsgpackFrame(encodeMsgpack(value as never))).toEqual({ type: 'message', message: value })
  })

  it('refuses oversized and malformed frames', () => {
    expect(decodeMsgpackFrame(new Uint8Array(100), 10)).toMatchObject({ type: 'invalid', error: { code: 'RXMCP_ERR_FRAME_TOO_LARGE' } })
    expect(decodeMsgpackFrame(new Uint8Array([0x92, 0x01]))).toMatchObject({ type: 'invalid', error: { code: -32700 } })
  })

  it('never lets a __proto__ key reach a prototype', () => {
    const decoded = decodeMsgpackFrame(encodeMsgpack(JSON.parse('{"jsonrpc":"2.0","method":"x","params":{"__proto__":{"polluted":true}}}')))
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(decoded.type).toBe('message')
  })
})
