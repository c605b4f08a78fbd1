import { beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Packr } from 'msgpackr'
import { decodeMsgpackFrame, encodeMsgpack, isMsgpackLoaded, loadMsgpack } from '../../../lib/codec/msgpack.ts'
import { TransportError } from '../../../lib/jsonrpc/errors.ts'

// Runs before the file's other cases (and so before beforeAll below loads msgpackr).
describe('loadMsgpack', () => {
  it('is required before encoding or decoding, and loads msgpackr once', async () => {
    expect(isMsgpackLoaded()).toBe(false)
    expect(() => encodeMsgpack({ jsonrpc: '2.0', method: 'ping' })).toThrow(TransportError)
    expect(() => decodeMsgpackFrame(new Uint8Array([0xc0]))).toThrow('await loadMsgpack() first')
    await Promise.all([loadMsgpack(), loadMsgpack()])
    expect(isMsgpackLoaded()).toBe(true)
  })
})

/** JSON values without the one key msgpackr renames on purpose. */
const json = fc.jsonValue().filter(value => !JSON.stringify(value).includes('"__proto__"'))

describe('msgpack', () => {
  beforeAll(() => loadMsgpack())

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
  describe('values with no JSON form', () => {
    // A peer with msgpackr's every type on: what an attacker's encoder can produce.
    const rich = new Packr({ moreTypes: true, structuredClone: true, useRecords: false })
    const wrap = (value: unknown) => rich.pack({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: value } } })
    it.each([
      ['a Date', new Date(0)],
      ['a Set', new Set([1])],
      ['a Map', new Map([[1, 2]])],
      ['a RegExp', /x/g],
      ['an Error', new Error('boom')],
      ['a Uint8Array', new Uint8Array([1, 2, 3])],
      ['a BigInt', 10n ** 30n],
      ['NaN', NaN],
      ['Infinity', -Infinity],
      ['undefined', undefined],
    ])('refuses %s with -32700 before msgpackr builds it', (_name, value) => {
      const decoded = decodeMsgpackFrame(wrap(value))
      expect(decoded).toMatchObject({ type: 'invalid', error: { code: -32700, message: expect.stringMatching(/^Parse error: invalid msgpack \(/) } })
    })

    it('refuses binary strings, non-string keys, integers past the safe range and trailing bytes', () => {
      const plain = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false })
      expect(decodeMsgpackFrame(plain.pack({ a: Buffer.from('bin') }))).toMatchObject({ type: 'invalid', error: { message: 'Parse error: invalid msgpack (binary data is not a JSON value)' } })
      expect(decodeMsgpackFrame(new Uint8Array([0x81, 0x01, 0x02]))).toMatchObject({ type: 'invalid', error: { message: 'Parse error: invalid msgpack (map keys must be strings)' } })
      expect(decodeMsgpackFrame(new Uint8Array([0xcf, 0x00, 0x20, 0, 0, 0, 0, 0, 0]))).toMatchObject({ type: 'invalid', error: { message: 'Parse error: invalid msgpack (integer beyond the safe range)' } })
      expect(decodeMsgpackFrame(new Uint8Array([0x01, 0x02]))).toMatchObject({ type: 'invalid', error: { message: 'Parse error: invalid msgpack (bytes after the value)' } })
      expect(decodeMsgpackFrame(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff]))).toMatchObject({ type: 'invalid', error: { message: 'Parse error: invalid msgpack (truncated)' } })
    })

    it('reads a uint64 or int64 id that fits a safe integer as a number', () => {
      const text = (value: string) => [0xa0 | value.length, ...new TextEncoder().encode(value)]
      const frame = (id: number[]) => new Uint8Array([0x83, ...text('jsonrpc'), ...text('2.0'), ...text('id'), ...id, ...text('method'), ...text('ping')])
      expect(decodeMsgpackFrame(frame([0xcf, 0, 0, 0, 0, 0, 0, 0, 7]))).toEqual({ type: 'message', message: { jsonrpc: '2.0', id: 7, method: 'ping' } })
      expect(decodeMsgpackFrame(frame([0xcf, 0x00, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toEqual({ type: 'message', message: { jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method: 'ping' } })
      expect(decodeMsgpackFrame(frame([0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]))).toEqual({ type: 'message', message: { jsonrpc: '2.0', id: -2, method: 'ping' } })
    })

    it('encodes values msgpackr would write as extensions the way JSON does, so the other side takes them', () => {
      const payload = { jsonrpc: '2.0', id: 1, result: { skipped: undefined, when: new Date(0), list: [undefined, 1], custom: { toJSON: () => 'mine' } } }
      expect(decodeMsgpackFrame(encodeMsgpack(payload as never))).toEqual({ type: 'message', message: JSON.parse(JSON.stringify(payload)) })
      expect(() => encodeMsgpack({ jsonrpc: '2.0', id: 1, result: { n: 2n ** 70n } } as never)).toThrow()
    })

    it('only ever yields JSON values, whatever the bytes', () => {
      const isJson = (value: unknown): boolean => value === null || typeof value === 'string' || typeof value === 'boolean'
        || (typeof value === 'number' && Number.isFinite(value))
        || (Array.isArray(value) && value.every(isJson))
        || (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype && Object.values(value as object).every(isJson))
      fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), frame => {
        const decoded = decodeMsgpackFrame(frame)
        if (decoded.type === 'message') expect(isJson(decoded.message)).toBe(true)
      }), { numRuns: 2000 })
    })
  })
})
