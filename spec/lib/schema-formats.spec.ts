import { describe, expect, it } from 'vitest'
import { DATE_PATTERN, DATE_TIME_SHAPE, EMAIL_PATTERN, URI_PATTERN, UUID_PATTERN, isDate, isDateTime } from '../../lib/schema-formats.ts'

describe('DATE_PATTERN', () => {
  it('accepts exactly the days isDate accepts, every day of four centuries and more', () => {
    const pattern = new RegExp(DATE_PATTERN, 'u')
    const two = (n: number) => String(n).padStart(2, '0')
    let checked = 0
    // Disagreements are collected and asserted once: an expect per day made the case take seconds
    // on a loaded machine.
    const disagreements: string[] = []
    for (const year of [...Array.from({ length: 420 }, (_, index) => 1890 + index), 0, 4, 100, 400, 1900, 2000, 2100, 9996, 9999]) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const text = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}`
          if (pattern.test(text) !== isDate(text)) disagreements.push(text)
          checked++
        }
      }
    }
    expect(disagreements).toEqual([])
    expect(checked).toBeGreaterThan(190_000)
    expect(pattern.test('2024-02-29')).toBe(true)
    expect(pattern.test('2100-02-29')).toBe(false)
  })
})

describe('the format patterns', () => {
  it('compile with the u flag alone, and need no i flag (which would let ſ and the Kelvin sign in)', () => {
    for (const source of [EMAIL_PATTERN, URI_PATTERN, UUID_PATTERN, DATE_PATTERN, DATE_TIME_SHAPE]) {
      expect(() => new RegExp(source, 'u')).not.toThrow()
      expect(source).not.toMatch(/\(\?i/)
    }
    expect(new RegExp(URI_PATTERN, 'u').test('HTTPS://EXAMPLE.COM/A')).toBe(true)
    expect(new RegExp(URI_PATTERN, 'u').test('https://\u017f.com')).toBe(false)
    expect(new RegExp(UUID_PATTERN, 'u').test('123E4567-E89B-12D3-A456-426614174000')).toBe(true)
    expect(new RegExp(EMAIL_PATTERN, 'u').test('a@\u212a.com')).toBe(false)
  })

  it('gives DATE_TIME_SHAPE the shape isDateTime requires', () => {
    const shape = new RegExp(DATE_TIME_SHAPE, 'u')
    for (const text of ['2025-11-25T10:00:00Z', '2025-11-25t10:00:00.5+05:30', '2025-13-40T99:99:99Z']) expect(shape.test(text), text).toBe(true)
    for (const text of ['2025-11-25 10:00:00Z', '2025-11-25T10:00Z', '2025-11-25T10:00:00']) {
      expect(shape.test(text), text).toBe(false)
      expect(isDateTime(text), text).toBe(false)
    }
  })
})
