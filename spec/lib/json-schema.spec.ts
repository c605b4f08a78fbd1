import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { applyDefaults, compileSchema as compileCompiled, isObjectSchema } from '../../lib/json-schema.ts'
import { compileSchema as compileInterpreted } from '../../lib/json-schema-interpreted.ts'
import { verifies } from '../helpers/verifies.ts'

/** Both validators, which must behave alike: every case below runs on each. */
const IMPLEMENTATIONS = [['compiled', compileCompiled], ['interpreted', compileInterpreted]] as const

/** `value` frozen all the way down. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) deepFreeze(item)
  return Object.freeze(value)
}

/** Object.prototype must come out of every test as clean as it went in. */
afterEach(() => {
  expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false)
})

describe('compileSchema', () => describe.each(IMPLEMENTATIONS)('%s', (name, compileSchema) => {
  it('accepts a matching value and returns the shared valid verdict', () => {
    const validate = compileSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })
    expect(validate({ text: 'hi' })).toEqual({ valid: true })
    expect(validate({ text: 'a' })).toBe(validate({ text: 'b' }))
  })

  it('explains a failure as one line of JSON Pointer and message', () => {
    const validate = compileSchema({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } },
    })
    expect(validate({ items: [{ name: 1 }] })).toEqual({
      valid: false,
      message: '/items/0/name: must be string',
      errors: [{ path: '/items/0/name', message: 'must be string' }],
    })
  })

  it('leaves the path prefix off errors at the root', () => {
    const validate = compileSchema({ type: 'object', required: ['text'] })
    expect(validate({})).toEqual({
      valid: false,
      message: "must have required property 'text'",
      errors: [{ path: '', message: "must have required property 'text'" }],
    })
    expect(validate('x')).toMatchObject({ message: 'must be object' })
  })

  it.each([
    ['additionalProperties', { type: 'object', properties: {}, additionalProperties: false }, { extra: 1 }, 'must NOT have additional property "extra"'],
    ['unevaluatedProperties', { type: 'object', unevaluatedProperties: false }, { extra: 1 }, 'must NOT have unevaluated property "extra"'],
    ['enum', { type: 'object', properties: { mode: { enum: ['fast', 'slow'] } } }, { mode: 'x' }, '/mode: must be one of "fast", "slow"'],
    ['const', { const: 42 }, 41, 'must be 42'],
  ])('names what %s expects', (_keyword, schema, value, message) => {
    expect(compileSchema(schema)(value)).toMatchObject({ valid: false, message })
  })

  it('shortens a long enum in the message', () => {
    const values = Array.from({ length: 20 }, (_, index) => `v${index}`)
    const result = compileSchema({ enum: values })('nope')
    expect(result).toMatchObject({ valid: false, message: expect.stringMatching(/^must be one of "v0", .*"v9", …$/) })
  })

  it('keeps the message on one line when a property name holds a line break', () => {
    const result = compileSchema({ type: 'object', additionalProperties: false })(JSON.parse('{"a\\nb\\u2028c":1}'))
    expect(result.valid).toBe(false)
    if (!result.valid) expect(result.message).not.toMatch(/[\n\r\u2028]/)
  })

  it('reads a schema without $schema as 2020-12 (prefixItems, $defs, unevaluatedProperties)', () => {
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

  it('rejects a draft-07 tuple `items` array when no $schema says draft-07', () => {
    expect(() => compileSchema({ type: 'array', items: [{ type: 'string' }] })).toThrow(TypeError)
  })

  it('sees unevaluatedProperties through allOf in 2020-12', () => {
    const validate = compileSchema({
      allOf: [{ properties: { a: { type: 'string' } } }],
      properties: { b: { type: 'number' } },
      unevaluatedProperties: false,
    })
    expect(validate({ a: 'x', b: 1 }).valid).toBe(true)
    expect(validate({ a: 'x', c: 1 }).valid).toBe(false)
  })

  it.each([
    'https://json-schema.org/draft/2020-12/schema',
    'https://json-schema.org/draft/2020-12/schema#',
    'http://json-schema.org/draft/2020-12/schema',
  ])('honours the 2020-12 $schema %s', $schema => {
    const validate = compileSchema({ $schema, type: 'array', prefixItems: [{ type: 'string' }], items: false })
    expect(validate(['a']).valid).toBe(true)
    expect(validate(['a', 'b']).valid).toBe(false)
  })

  it.each([
    'http://json-schema.org/draft-07/schema#',
    'http://json-schema.org/draft-07/schema',
    'https://json-schema.org/draft-07/schema#',
  ])('honours the draft-07 $schema %s (definitions and tuple items)', $schema => {
    const validate = compileSchema({
      $schema,
      definitions: { n: { type: 'integer' } },
      type: 'object',
      properties: { pair: { type: 'array', items: [{ $ref: '#/definitions/n' }, { type: 'string' }], additionalItems: false } },
    })
    expect(validate({ pair: [1, 'a'] }).valid).toBe(true)
    expect(validate({ pair: [1.5, 'a'] })).toMatchObject({ valid: false, message: '/pair/0: must be integer' })
    expect(validate({ pair: [1, 'a', 'extra'] }).valid).toBe(false)
  })

  it('honours a draft-06 $schema', () => {
    const validate = compileSchema({ $schema: 'http://json-schema.org/draft-06/schema#', type: 'number', exclusiveMinimum: 3 })
    expect(validate(4).valid).toBe(true)
    expect(validate(3)).toMatchObject({ valid: false, message: 'must be > 3' })
  })

  it('honours a 2019-09 $schema', () => {
    const validate = compileSchema({
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      type: 'object',
      properties: { a: { type: 'string' } },
      unevaluatedProperties: false,
    })
    expect(validate({ a: 'x' }).valid).toBe(true)
    expect(validate({ a: 'x', b: 1 }).valid).toBe(false)
  })

  it.each([
    ['draft-04', 'http://json-schema.org/draft-04/schema#'],
    ['a custom meta-schema', 'https://example.com/my-meta'],
  ])('throws TypeError naming an unsupported dialect (%s)', (_name, $schema) => {
    expect(() => compileSchema({ $schema, type: 'object' })).toThrow(new TypeError(`Unsupported JSON Schema dialect ${JSON.stringify($schema)}: use 2020-12, 2019-09, draft-07 or draft-06`))
  })

  it('follows recursive references', () => {
    const validate = compileSchema({
      $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } }, additionalProperties: false } },
      $ref: '#/$defs/node',
    })
    expect(validate({ children: [{ children: [] }, { children: [{}] }] }).valid).toBe(true)
    expect(validate({ children: [{ oops: 1 }] })).toMatchObject({ valid: false, message: '/children/0: must NOT have additional property "oops"' })
  })

  it('follows a recursive reference to the root', () => {
    const validate = compileSchema({ type: 'object', properties: { next: { $ref: '#' }, value: { type: 'number' } } })
    expect(validate({ value: 1, next: { value: 2, next: {} } }).valid).toBe(true)
    expect(validate({ next: { next: { value: 'x' } } })).toMatchObject({ valid: false, message: '/next/next/value: must be number' })
  })

  it('follows a recursive reference to the root of a schema with a relative $id', () => {
    const validate = compileSchema({ $id: 'tool.json', type: 'object', properties: { next: { $ref: '#' }, value: { type: 'number' } } })
    expect(validate({ next: { value: 'x' } })).toMatchObject({ valid: false, message: '/next/value: must be number' })
  })

  it('follows $dynamicRef and $anchor', () => {
    const tree = compileSchema({ $dynamicAnchor: 'node', type: 'object', properties: { kids: { type: 'array', items: { $dynamicRef: '#node' } } } })
    expect(tree({ kids: [{ kids: [] }] }).valid).toBe(true)
    expect(tree({ kids: [{ kids: [1] }] }).valid).toBe(false)
    const anchored = compileSchema({ $defs: { a: { $anchor: 'num', type: 'number' } }, $ref: '#num' })
    expect(anchored(1).valid).toBe(true)
    expect(anchored('1').valid).toBe(false)
  })

  it('names a missing reference without the internal base URI', () => {
    expect(() => compileSchema({ $ref: '#/$defs/missing' })).toThrow(new TypeError("Invalid JSON Schema: can't resolve reference #/$defs/missing from id (root)"))
  })

  it('gives a verdict instead of throwing when a value is nested too deeply to walk', () => {
    const validate = compileSchema({ $defs: { list: { type: 'array', items: { $ref: '#/$defs/list' } } }, $ref: '#/$defs/list' })
    let deep: unknown = []
    for (let depth = 0; depth < 100_000; depth += 1) deep = [deep]
    expect(validate(deep)).toEqual({
      valid: false,
      message: 'value is nested too deeply to validate',
      errors: [{ path: '', message: 'value is nested too deeply to validate' }],
    })
    expect(validate([[[]]]).valid).toBe(true)
  })

  it('resolves a $ref to an $id embedded in the same schema', () => {
    const validate = compileSchema({
      $id: 'https://example.com/root',
      $defs: { name: { $id: 'https://example.com/name', type: 'string', minLength: 1 } },
      properties: { name: { $ref: 'https://example.com/name' } },
    })
    expect(validate({ name: 'x' }).valid).toBe(true)
    expect(validate({ name: '' }).valid).toBe(false)
  })

  it.each([
    ['email', ['a@b.co', 'first.last+tag@sub.example.org'], ['not-an-email', 'a@b', 'a b@c.d', 'a@@b.c', 'a@b..c', '@b.c']],
    ['uri', ['https://example.com/x?y=1#z', 'urn:isbn:0451450523', 'mailto:a@b.c', 'http://[::1]:80/', 'https://e.com/%20'], ['no scheme', '/relative/path', 'https://e.com/a b', 'https://e.com/%zz', 'https://é.com', '1http://x']],
    ['date', ['2024-02-29', '2000-02-29', '0050-01-01', '2025-12-31'], ['2023-02-29', '1900-02-29', '2025-13-01', '2025-04-31', '2025-1-1', '2025-00-10']],
    ['date-time', ['2025-11-25T10:00:00Z', '2025-11-25t10:00:00.123z', '2025-11-25T10:00:00+05:30', '2016-12-31T23:59:60Z', '2017-01-01T00:59:60+01:00'], ['2025-11-25 10:00:00Z', '2025-11-25T24:00:00Z', '2025-11-25T10:60:00Z', '2025-11-25T10:00:00', '2025-11-25T10:00Z', '2025-11-25T12:00:60Z', '2025-11-25T10:00:00+24:00', '2025-02-30T10:00:00Z']],
    ['uuid', ['123e4567-e89b-12d3-a456-426614174000', '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'], ['123', '123e4567e89b12d3a456426614174000', '123e4567-e89b-12d3-a456-42661417400g', '{123e4567-e89b-12d3-a456-426614174000}']],
  ])('checks the %s format', (format, good, bad) => {
    const validate = compileSchema({ type: 'string', format })
    for (const value of good) expect(validate(value), value).toEqual({ valid: true })
    for (const value of bad) expect(validate(value), value).toMatchObject({ valid: false, message: `must match format "${format}"` })
  })

  it('applies formats to strings only', () => {
    const validate = compileSchema({ type: ['string', 'number'], format: 'email' })
    expect(validate(5).valid).toBe(true)
    expect(validate('five').valid).toBe(false)
  })

  it('ignores unknown formats and keywords without writing to the console', () => {
    const spies = (['log', 'warn', 'error'] as const).map(method => vi.spyOn(console, method).mockImplementation(() => {}))
    try {
      const validate = compileSchema({ type: 'string', format: 'x-made-up', 'x-ui-widget': 'textarea', examples: ['a'] })
      expect(validate('anything').valid).toBe(true)
      for (const spy of spies) expect(spy).not.toHaveBeenCalled()
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
  })

  it.each([
    ['an unknown type', { type: 'no-such-type' }],
    ['a keyword of the wrong type', { type: 'string', minLength: 'x' }],
    ['a reference to nothing', { $ref: '#/$defs/missing' }],
    ['a pattern that is not a regular expression', { type: 'string', pattern: '(' }],
    ['a $schema that is not a string', { $schema: 7 }],
  ])('throws TypeError at compile time for %s', (_name, schema) => {
    expect(() => compileSchema(schema)).toThrow(TypeError)
    expect(() => compileSchema(schema)).toThrow(/^Invalid JSON Schema: /)
  })

  it('throws again when the same invalid schema object is compiled twice', () => {
    const schema = { type: 'string', maxLength: 'ten' }
    expect(() => compileSchema(schema)).toThrow(TypeError)
    expect(() => compileSchema(schema)).toThrow(TypeError)
  })

  // Only ajv has an error of its own to keep; the interpreter's refusals are the keyword check's
  // (registered for the compiled validator alone, so no case shows as skipped).
  if (name === 'compiled') {
    it('keeps the cause of a compile failure', () => {
      try {
        compileSchema({ type: 'no-such-type' })
        expect.unreachable()
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError)
        expect((error as TypeError).cause).toBeInstanceOf(Error)
      }
    })
  }

  it.each([[null], [[]], ['{}'], [true]])('throws TypeError when the schema is %j', schema => {
    expect(() => compileSchema(schema as unknown as object)).toThrow(new TypeError('A JSON Schema must be an object'))
  })

  it('compiles two different schemas with the same $id', () => {
    const first = compileSchema({ $id: 'https://example.com/s', type: 'string' })
    const second = compileSchema({ $id: 'https://example.com/s', type: 'number' })
    expect(first('x').valid).toBe(true)
    expect(first(1).valid).toBe(false)
    expect(second(1).valid).toBe(true)
    expect(second('x').valid).toBe(false)
  })

  it('keeps working after a schema claims the id of the 2020-12 meta-schema', () => {
    compileSchema({ $id: 'https://json-schema.org/draft/2020-12/schema', type: 'string' })
    const validate = compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'integer' })
    expect(validate(1).valid).toBe(true)
    expect(validate('1').valid).toBe(false)
  })

  it('does not let one schema reference another by $id', () => {
    compileSchema({ $id: 'https://example.com/shared-name', type: 'string' })
    expect(() => compileSchema({ properties: { name: { $ref: 'https://example.com/shared-name' } } })).toThrow(TypeError)
  })

  it('returns the same validator for the same schema object', () => {
    const schema = { type: 'object' }
    expect(compileSchema(schema)).toBe(compileSchema(schema))
    expect(compileSchema({ type: 'object' })).not.toBe(compileSchema(schema))
  })

  it('keeps 600 validators working at once (the compiled one retires its ajv instance every 256)', () => {
    const validators = Array.from({ length: 600 }, (_, index) => compileSchema({ type: 'integer', minimum: index }))
    expect(validators[0](0).valid).toBe(true)
    expect(validators[0](-1).valid).toBe(false)
    expect(validators[599](599).valid).toBe(true)
    expect(validators[599](598)).toMatchObject({ valid: false, message: 'must be >= 599' })
  })

  it('checks required and declared properties against own properties only', () => {
    expect(compileSchema({ type: 'object', required: ['toString'] })({}).valid).toBe(false)
    expect(compileSchema({ type: 'object', properties: { constructor: { type: 'string' } } })({}).valid).toBe(true)
    expect(compileSchema({ type: 'object', required: ['__proto__'] })({}).valid).toBe(false)
  })

  it('compares objects whose members are named toString or valueOf (const, enum, uniqueItems)', () => {
    const value = JSON.parse('{"toString": 1, "valueOf": null}')
    expect(compileSchema({ const: {} })(value)).toMatchObject({ valid: false, message: 'must be {}' })
    expect(compileSchema({ enum: [{ toString: 1, valueOf: null }] })(value).valid).toBe(true)
    expect(compileSchema({ uniqueItems: true })([value, { ...value, toString: 2 }]).valid).toBe(true)
    expect(compileSchema({ uniqueItems: true })([value, JSON.parse('{"valueOf": null, "toString": 1}')])).toMatchObject({ valid: false, message: 'must NOT have duplicate items (items ## 0 and 1 are identical)' })
  })

  it('reads multipleOf on decimals, not binary fractions', () => {
    const cents = compileSchema({ type: 'number', multipleOf: 0.01 })
    expect(cents(1.13).valid).toBe(true)
    expect(cents(1.135)).toMatchObject({ valid: false, message: 'must be multiple of 0.01' })
    expect(compileSchema({ multipleOf: 1 })(1e21).valid).toBe(true)
    expect(compileSchema({ multipleOf: 0.1 })(0.3).valid).toBe(true)
  })

  it('does not pollute Object.prototype when validating __proto__ keys', () => {
    const validate = compileSchema({
      type: 'object',
      properties: { a: { type: 'object', default: {}, additionalProperties: { type: 'boolean' } } },
      additionalProperties: true,
    })
    const value = JSON.parse('{"__proto__":{"polluted":true},"a":{"ok":true},"constructor":{"prototype":{"polluted":true}}}')
    expect(validate(value).valid).toBe(true)
    // An own `__proto__` key is data like any other: checked, not followed.
    expect(validate(JSON.parse('{"a":{"__proto__":{"polluted":true}}}'))).toMatchObject({ valid: false, message: '/a/__proto__: must be boolean' })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('does not change the schema it compiles', () => {
    const schema = { $schema: 'https://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { type: 'string', default: 'x' } } }
    const before = structuredClone(schema)
    compileSchema(schema)({})
    expect(schema).toEqual(before)
    // Not even with properties JSON does not show: nothing but the schema's own keys.
    expect(Object.getOwnPropertyNames(schema.properties.a)).toEqual(['type', 'default'])
  })

  it('compiles a frozen schema', () => {
    const validate = compileSchema(deepFreeze({ type: 'object', $defs: { n: { type: 'integer' } }, properties: { n: { $ref: '#/$defs/n' }, at: { type: 'string', format: 'date' } } }))
    expect(validate({ n: 1, at: '2024-02-29' }).valid).toBe(true)
    expect(validate({ n: 1.5 })).toMatchObject({ valid: false, message: '/n: must be integer' })
  })
}))

describe('applyDefaults', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      age: { type: 'integer', default: 30 },
      subscribed: { type: 'boolean', default: true },
      colors: { type: 'array', items: { enum: ['red', 'green'] }, default: ['red'] },
    },
  }

  verifies('elicitation:form-defaults', 'fills fields the user left out with the schema defaults', () => {
    expect(applyDefaults(schema, { name: 'Ada' })).toEqual({ name: 'Ada', age: 30, subscribed: true, colors: ['red'] })
    expect(applyDefaults(schema, undefined)).toEqual({ age: 30, subscribed: true, colors: ['red'] })
  })

  it('keeps every value the user gave, falsy ones included', () => {
    expect(applyDefaults(schema, { age: 0, subscribed: false, colors: [], name: '' })).toEqual({ age: 0, subscribed: false, colors: [], name: '' })
    expect(applyDefaults(schema, { age: null } as Record<string, unknown>)).toMatchObject({ age: null })
  })

  it('treats a field set to undefined as left out', () => {
    expect(applyDefaults(schema, { age: undefined })).toMatchObject({ age: 30 })
  })

  it('fills a field whose name Object.prototype also has', () => {
    expect(applyDefaults({ type: 'object', properties: { toString: { type: 'string', default: 'x' } } }, {})).toEqual({ toString: 'x' })
  })

  it('accepts null content as an empty answer', () => {
    expect(applyDefaults(schema, null as unknown as undefined)).toEqual({ age: 30, subscribed: true, colors: ['red'] })
  })

  it('keeps fields the schema does not name', () => {
    expect(applyDefaults(schema, { extra: 1 })).toMatchObject({ extra: 1, age: 30 })
  })

  it('returns a copy of the content when the schema has no properties', () => {
    const content = { a: 1 }
    const out = applyDefaults({ type: 'object' }, content)
    expect(out).toEqual({ a: 1 })
    expect(out).not.toBe(content)
  })

  it('mutates neither the content nor the schema, and copies object defaults', () => {
    const content = { name: 'x' }
    const schemaBefore = structuredClone(schema)
    const out = applyDefaults(schema, content)
    expect(content).toEqual({ name: 'x' })
    ;(out.colors as string[]).push('green')
    expect(schema).toEqual(schemaBefore)
  })

  it('drops __proto__, constructor and prototype from the content and the schema', () => {
    const hostileSchema = JSON.parse('{"type":"object","properties":{"__proto__":{"default":{"polluted":true}},"constructor":{"default":1},"prototype":{"default":2},"ok":{"default":3}}}')
    const content = JSON.parse('{"name":"x","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}')
    const out = applyDefaults(hostileSchema, content)
    expect(Object.keys(out)).toEqual(['name', 'ok'])
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.keys(content)).toEqual(['name', '__proto__', 'constructor'])
  })

  it('never returns a prototype key and keeps every other given value (property)', () => {
    const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'age', 'name'), fc.string())
    fc.assert(fc.property(fc.dictionary(key, fc.jsonValue()), entries => {
      const content = JSON.parse(JSON.stringify(entries)) as Record<string, unknown>
      const out = applyDefaults(schema, content)
      expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
      for (const forbidden of ['__proto__', 'constructor', 'prototype']) expect(Object.hasOwn(out, forbidden)).toBe(false)
      for (const [name, value] of Object.entries(content)) {
        if (!['__proto__', 'constructor', 'prototype'].includes(name)) expect(out[name]).toEqual(value)
      }
    }))
  })

  it.each([[[]], ['text'], [42]])('throws TypeError when the content is %j', content => {
    expect(() => applyDefaults(schema, content as unknown as Record<string, unknown>)).toThrow(new TypeError('Elicitation content must be an object'))
  })
})

describe('isObjectSchema', () => {
  it.each([
    [{ type: 'object' }, true],
    [{ type: 'object', properties: {} }, true],
    [{ type: 'string' }, false],
    [{ type: ['object', 'null'] }, false],
    [{ properties: {} }, false],
    [{}, false],
    [null, false],
    [undefined, false],
    ['object', false],
  ])('%j gives %s', (schema, expected) => {
    expect(isObjectSchema(schema)).toBe(expected)
  })
})
