import { beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Packr } from 'msgpackr'
import { STRUCTURE_DEFAULTS, exceededBound } from '../../../lib/codec/structure.ts'
import { decodeJsonFrame, json } from '../../../lib/codec/json.ts'
import { jsonLines } from '../../../lib/codec/json-lines.ts'
import { decodeMsgpackFrame, encodeMsgpack, loadMsgpack } from '../../../lib/codec/msgpack.ts'
import { ErrorCode, ParseError, StructureLimitError } from '../../../lib/jsonrpc/errors.ts'
import type { Inbound } from '../../../lib/transport.ts'

/** Depth and members of a parsed JSON value, counted the way the limits define them. */
function shapeOf(value: unknown, level = 0): { depth: number; members: number } {
  if (value === null || typeof value !== 'object') return { depth: level, members: 0 }
  const children = Array.isArray(value) ? value : Object.values(value)
  let depth = level + 1
  let members = children.length
  for (const child of children) {
    const shape = shapeOf(child, level + 1)
    depth = Math.max(depth, shape.depth)
    members += shape.members
  }
  return { depth, members }
}

const deepArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)
const deepRequest = (levels: number) => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}}`
const wideRequest = (keys: number) => `{"jsonrpc":"2.0","id":"wide","method":"tools/call","params":{"name":"x","arguments":{${Array.from({ length: keys }, (_, i) => `"k${i}":0`).join(',')}}}}`

function errorOf(item: Inbound): StructureLimitError {
  expect(item.type).toBe('invalid')
  const error = (item as { error: unknown }).error
  expect(error).toBeInstanceOf(StructureLimitError)
  return error as StructureLimitError
}

describe('exceededBound', () => {
  it.each([
    ['an empty object', '{}', 1, 0],
    ['a flat request', '{"jsonrpc":"2.0","id":1,"method":"ping"}', 1, 3],
    ['nested containers', '{"a":[1,[2,{"b":[]}]],"c":{}}', 5, 7],
    ['spaces before closes', '[ 1 , [ ] , { "a" : 1 } ]', 2, 4],
    ['brackets and commas inside strings', '["[[[,,,", "\\"[{", "\\\\", "x\\\\\\"]]"]', 1, 4],
  ])('counts %s exactly', (_, text, depth, members) => {
    expect(shapeOf(JSON.parse(text))).toEqual({ depth, members })
    expect(exceededBound(text, depth, members)).toBeUndefined()
    expect(exceededBound(text, depth - 1, Infinity)).toBe('maxDepth')
    if (members > 0) expect(exceededBound(text, Infinity, members - 1)).toBe('maxMembers')
  })

  it('agrees with the parsed value on any JSON text', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), fc.nat(10), fc.nat(40), (value, maxDepth, maxMembers) => {
      const text = JSON.stringify(value)
      const { depth, members } = shapeOf(value)
      const expected = depth > maxDepth ? 'maxDepth' : members > maxMembers ? 'maxMembers' : undefined
      const found = exceededBound(text, maxDepth, maxMembers)
      // The scan stops at the first bound it meets, which may be either when both are broken.
      if (expected === undefined) expect(found).toBeUndefined()
      else expect(found === 'maxDepth' ? depth > maxDepth : members > maxMembers).toBe(true)
    }), { numRuns: 2000 })
  })

  it('finds the end of strings with escaped quotes and backslash runs (JSON inside a string)', () => {
    const alphabet = fc.constantFrom('"', '\\', '[', ']', '{', '}', ',', 'a')
    const tricky = fc.array(fc.string({ unit: alphabet, maxLength: 12 }), { maxLength: 6 })
    fc.assert(fc.property(tricky, fc.nat(3), (strings, extra) => {
      const value = [strings, { inner: JSON.stringify({ strings }) }, Array.from({ length: extra }, () => [])]
      const text = JSON.stringify(value)
      const { depth, members } = shapeOf(value)
      expect(exceededBound(text, depth, members)).toBeUndefined()
      expect(exceededBound(text, depth - 1, Infinity)).toBe('maxDepth')
      expect(exceededBound(text, Infinity, members - 1)).toBe('maxMembers')
    }), { numRuns: 2000 })
    expect(exceededBound(JSON.stringify(['x"y\\', '[[[', 1]), 1, 3)).toBeUndefined()
  })

  it('does not scan a text too short to break either bound, and leaves an unterminated string to JSON.parse', () => {
    expect(exceededBound(deepArray(128), 128, 100_000)).toBeUndefined()
    expect(exceededBound(deepArray(129), 128, 100_000)).toBe('maxDepth')
    expect(exceededBound('"[[[abc', 0, 0)).toBeUndefined()
  })
})

describe('issue 20: JSON depth and member bounds in the codecs', () => {
  beforeAll(() => loadMsgpack())

  it('ships 128 levels and 100,000 members as the defaults', () => {
    expect(STRUCTURE_DEFAULTS).toEqual({ maxDepth: 128, maxMembers: 100_000 })
  })

  it.each([
    ['text', (frame: string) => frame],
    ['bytes', (frame: string) => new TextEncoder().encode(frame)],
  ])('refuses a %s frame nested 1.9 million levels deep as -32700 with its id, before parsing it', (_, as) => {
    const error = errorOf(decodeJsonFrame(as(deepRequest(1_900_000)), Infinity))
    expect(error).toBeInstanceOf(ParseError)
    expect(error).toMatchObject({ code: ErrorCode.ParseError, bound: 'maxDepth', limit: 128, id: 7, kind: 'request', data: { bound: 'maxDepth', limit: 128 } })
    expect(error.message).toBe('Parse error: the message nests deeper than 128 levels (maxDepth)')
    expect(errorOf(decodeJsonFrame(as(deepArray(1_900_000)), Infinity))).toMatchObject({ bound: 'maxDepth', id: undefined })
  })

  it('refuses a frame of 200,000 keys as -32700 with its id', () => {
    const error = errorOf(decodeJsonFrame(wideRequest(200_000), Infinity))
    expect(error).toMatchObject({ code: ErrorCode.ParseError, bound: 'maxMembers', limit: 100_000, id: 'wide', kind: 'request' })
    expect(error.message).toBe('Parse error: the message holds more than 100000 object members and array elements (maxMembers)')
  })

  it('parses what stays within the bounds, and takes other bounds from the options', () => {
    // Arguments nested 126 levels (their own object the first): 128 with the envelope and params.
    expect(decodeJsonFrame(deepRequest(126)).type).toBe('message')
    expect(errorOf(decodeJsonFrame(deepRequest(127)))).toMatchObject({ bound: 'maxDepth' })
    expect(decodeJsonFrame(deepRequest(127), undefined, { maxDepth: 129 }).type).toBe('message')
    expect(errorOf(decodeJsonFrame(wideRequest(10), undefined, { maxMembers: 10 }))).toMatchObject({ bound: 'maxMembers', limit: 10 })
    const items: Inbound[] = []
    const decoder = json.createDecoder(item => items.push(item), { maxDepth: 4 })
    decoder.write(deepRequest(2))
    decoder.write(deepRequest(3))
    expect(items.map(item => item.type === 'invalid' ? (item.error as StructureLimitError).bound : item.type)).toEqual(['message', 'maxDepth'])
  })

  it('refuses a line of JSON lines past a bound and decodes the next line', () => {
    const items: Inbound[] = []
    const decoder = jsonLines.createDecoder(item => items.push(item), { maxMessageSize: Infinity })
    decoder.write(deepRequest(200_000) + '\n' + '{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
    decoder.write(wideRequest(100_001).slice(0, 1000))
    decoder.write(wideRequest(100_001).slice(1000) + '\n')
    expect(errorOf(items[0]!)).toMatchObject({ bound: 'maxDepth', id: 7 })
    expect(items[1]).toEqual({ type: 'message', message: { jsonrpc: '2.0', id: 8, method: 'ping' } })
    expect(errorOf(items[2]!)).toMatchObject({ bound: 'maxMembers', id: 'wide' })
  })

  it('refuses a msgpack frame past either bound, with the id read on the way', () => {
    const packr = new Packr({ useRecords: false })
    let nested: unknown = 1
    for (let i = 0; i < 200; i++) nested = { a: nested }
    const deep = decodeMsgpackFrame(packr.pack({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { arguments: nested } }))
    expect(errorOf(deep)).toMatchObject({ code: ErrorCode.ParseError, bound: 'maxDepth', limit: 128, id: 12, kind: 'request' })
    const wide = decodeMsgpackFrame(packr.pack({ jsonrpc: '2.0', id: 'w', result: { list: new Array(100_001).fill(0) } }))
    expect(errorOf(wide)).toMatchObject({ bound: 'maxMembers', limit: 100_000, id: 'w', kind: 'response' })
    // A container's members count when it opens, before its items are read; other bounds come from the options.
    const map = decodeMsgpackFrame(packr.pack({ id: 5, params: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i])) }), undefined, { maxMembers: 1000 })
    expect(errorOf(map)).toMatchObject({ bound: 'maxMembers', limit: 1000, id: 5, kind: 'request' })
    // Within the bounds it decodes as before.
    const ok = { jsonrpc: '2.0', id: 3, result: { list: new Array(1000).fill({ a: [1, 2] }) } }
    expect(decodeMsgpackFrame(encodeMsgpack(ok as never))).toEqual({ type: 'message', message: ok })
  })
})
