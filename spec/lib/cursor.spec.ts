import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { decodeCursor, encodeCursor, pageOf } from '../../lib/cursor.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'

describe('pageOf', () => {
  const items = Array.from({ length: 7 }, (_, i) => i)

  it('walks a list page by page with opaque cursors', () => {
    const first = pageOf('tools', items, undefined, 3)
    expect(first.items).toEqual([0, 1, 2])
    const second = pageOf('tools', items, first.nextCursor, 3)
    expect(second.items).toEqual([3, 4, 5])
    const third = pageOf('tools', items, second.nextCursor, 3)
    expect(third).toEqual({ items: [6] })
  })

  it.each([
    ['a cursor of another list', encodeCursor('prompts', 3)],
    ['text that is not base64url', 'not a cursor!'],
    ['base64 of garbage', btoa('garbage')],
    ['an offset past the end', encodeCursor('tools', 99)],
    ['a number', 3],
    ['a very long string', 'A'.repeat(500)],
  ])('refuses %s with InvalidParamsError', (_name, cursor) => {
    expect(() => pageOf('tools', items, cursor, 3)).toThrow(InvalidParamsError)
  })

  it('round-trips every offset', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 20 }), fc.nat(1e8), (list, offset) => {
      expect(decodeCursor(list, encodeCursor(list, offset))).toBe(offset)
    }))
  })
})
