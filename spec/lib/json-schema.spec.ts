import { describe, expect, it } from 'vitest'
import { applyDefaults, compileSchema, isObjectSchema } from '../../lib/json-schema.ts'

describe('compileSchema', () => {
  it('validates values and explains failures with their path', () => {
    const validate = compileSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })
    expect(validate({ text: 'hi' })).toEqual({ valid: true })
    const result = validate({ text: 1 })
    expect(result).toMatchObject({ valid: false, message: '/text: must be string' })
    expect(validate({})).toMatchObject({ valid: false, message: expect.stringContaining("must have required property 'text'") })
  })

  it('uses 2020-12 when $schema is absent (prefixItems, $defs, unevaluatedProperties)', () => {
    const validate = compileSchema({
      type: 'object',
      $defs: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
      properties: { at: { $ref: '#/$defs/point' } },
      unevaluatedProperties: false,
    })
    expect(validate({ at: [1, 2] }).valid).toBe(true)
    expect(validate({ at: [1, 'x'] }).valid).toBe(false)
    expect(validate({ at: [1, 2, 3] }).valid).toBe(false)
    expect(validate({ at: [1, 2], extra: true }).valid).toBe(false)
  })

  it('honours a draft-07 $schema (definitions and tuple items)', () => {
    const validate = compileSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      definitions: { n: { type: 'integer' } },
      type: 'object',
      properties: { pair: { type: 'array', items: [{ $ref: '#/definitions/n' }, { type: 'string' }] } },
    })
    expect(validate({ pair: [1, 'a'] }).valid).toBe(true)
    expect(validate({ pair: [1.5, 'a'] }).valid).toBe(false)
  })

  it('follows recursive references', () => {
    const validate = compileSchema({
      $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } }, additionalProperties: false } },
      $ref: '#/$defs/node',
    })
    expect(validate({ children: [{ children: [] }, { children: [{}] }] }).valid).toBe(true)
    expect(validate({ children: [{ oops: 1 }] }).valid).toBe(false)
  })

  it.each([
    ['email', 'a@b.co', 'not-an-email'],
    ['uri', 'https://example.com/x', 'no scheme'],
    ['date', '2024-02-29', '2023-02-29'],
    ['date-time', '2025-11-25T10:00:00Z', '2025-11-25 25:00'],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', '123'],
  ])('checks the %s format', (format, good, bad) => {
    const validate = compileSchema({ type: 'string', format })
    expect(validate(good).valid).toBe(true)
    expect(validate(bad).valid).toBe(false)
  })

  it('throws TypeError for an invalid schema', () => {
    expect(() => compileSchema({ type: 'no-such-type' })).toThrow(TypeError)
    expect(() => compileSchema({ $schema: 'https://example.com/unknown-dialect' })).toThrow(TypeError)
  })

  it('compiles two schemas with the same $id', () => {
    const first = compileSchema({ $id: 'https://example.com/s', type: 'string' })
    const second = compileSchema({ $id: 'https://example.com/s', type: 'number' })
    expect(first('x').valid).toBe(true)
    expect(second(1).valid).toBe(true)
    expect(second('x').valid).toBe(false)
  })

  it('caches the validator per schema object', () => {
    const schema = { type: 'object' }
    expect(compileSchema(schema)).toBe(compileSchema(schema))
  })

  it('does not pollute Object.prototype when validating __proto__ keys', () => {
    const validate = compileSchema({ type: 'object', properties: { a: { type: 'object', default: {} } } })
    validate(JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":{"polluted":true}}}'))
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('applyDefaults', () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer', default: 30 }, colors: { type: 'array', default: ['red'] }, __proto__: { default: 1 } },
  }

  it('fills left-out fields with defaults and keeps what the user gave', () => {
    expect(applyDefaults(schema, { name: 'Ada', age: 41 })).toEqual({ name: 'Ada', age: 41, colors: ['red'] })
    expect(applyDefaults(schema, undefined)).toEqual({ age: 30, colors: ['red'] })
  })

  it('does not mutate its input and drops prototype keys', () => {
    const content = JSON.parse('{"name":"x","__proto__":{"polluted":true}}')
    const out = applyDefaults(schema, content)
    expect(content).toEqual(JSON.parse('{"name":"x","__proto__":{"polluted":true}}'))
    expect(Object.keys(out)).toEqual(['name', 'age', 'colors'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('isObjectSchema', () => {
  it.each([[{ type: 'object' }, true], [{ type: 'string' }, false], [null, false], [{}, false]])('%j -> %s', (schema, expected) => {
    expect(isObjectSchema(schema)).toBe(expected)
  })
})
