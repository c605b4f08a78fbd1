import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { compileSchema as compileCompiled } from '../../lib/json-schema.ts'
import { compileSchema, interpretedJsonSchema, isSecureSchema } from '../../lib/json-schema-interpreted.ts'

/*
 * What the interpreted validator does beyond the cases spec/lib/json-schema.spec.ts runs on both:
 * the same words as the compiled one for each keyword, the same verdict on generated schemas, and
 * what it does around the interpreter (dynamic references, anchors, values that are not JSON).
 */

describe('compileSchema (interpreted)', () => {
  it.each([
    [{ type: 'string', minLength: 2 }, 'a'],
    [{ type: 'string', maxLength: 2 }, 'abc'],
    [{ type: 'string', pattern: '^a' }, 'b'],
    [{ type: 'array', minItems: 2 }, [1]],
    [{ type: 'array', maxItems: 1 }, [1, 2]],
    [{ type: 'array', uniqueItems: true }, [{ a: 1 }, 2, { a: 1 }]],
    [{ type: 'array', items: { type: 'integer' }, uniqueItems: true }, [3, 1, 3, 1]],
    [{ type: 'object', minProperties: 1 }, {}],
    [{ type: 'object', maxProperties: 0 }, { a: 1 }],
    [{ multipleOf: 3 }, 4],
    [{ maximum: 3 }, 4],
    [{ exclusiveMaximum: 3 }, 3],
    [{ minimum: 3 }, 2],
    [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, null],
    [{ oneOf: [{ type: 'number' }, { type: 'integer' }] }, 1],
    [{ oneOf: [{ type: 'string' }, { type: 'boolean' }] }, 1],
    [{ not: { type: 'string' } }, 'x'],
    [{ contains: { type: 'string' } }, [1]],
    [{ contains: { type: 'string' }, minContains: 2 }, ['a', 1]],
    [{ contains: { type: 'string' }, maxContains: 1 }, ['a', 'b']],
    [{ dependentRequired: { a: ['b'] } }, { a: 1 }],
    [{ propertyNames: { maxLength: 1 } }, { ab: 1 }],
    [{ if: { type: 'string' }, then: { minLength: 2 } }, 'a'],
    [{ type: ['string', 'null'] }, 1],
    [{ prefixItems: [{ type: 'string' }], items: false }, ['a', 'b']],
    [{ allOf: [{ type: 'string' }, { minLength: 3 }] }, 'ab'],
    [{ properties: { a: { $ref: '#/$defs/n' } }, $defs: { n: { type: 'integer', minimum: 0 } } }, { a: -1 }],
    [{ type: 'object', properties: { a: false } }, { a: 1 }],
    [{ patternProperties: { '^x': { type: 'integer' } } }, { xa: 'no' }],
    [{ type: 'string', format: 'date-time' }, '2025-13-01T00:00:00Z'],
    [{ type: 'string', format: 'date-time' }, '2025-11-25 10:00:00Z'],
    [{ type: 'string', format: 'email', pattern: '@' }, 'nope'],
    [{ type: 'string', format: 'email', pattern: '@' }, 'no@pe'],
    [{ type: 'object', properties: { 'a b/c~': { type: 'string' } } }, { 'a b/c~': 1 }],
    [{ unevaluatedProperties: false, properties: { a: {} } }, { a: 1, b: 2 }],
    [{ type: 'array', items: { type: 'object', required: ['id'] } }, [{ id: 1 }, {}]],
    [{ $schema: 'http://json-schema.org/draft-07/schema#', dependencies: { a: ['b'] } }, { a: 1 }],
    [{ $schema: 'http://json-schema.org/draft-07/schema#', items: [{ type: 'string' }], additionalItems: false }, ['a', 1]],
  ])('words the failure of %j on %j as the compiled validator does', (schema, value) => {
    const verdict = compileSchema(schema)(value)
    expect(verdict.valid).toBe(false)
    expect(verdict).toEqual(compileCompiled(schema)(value))
  })

  it('gives the compiled validator\'s verdict on generated schemas and values (property)', () => {
    const leaf = fc.oneof(
      fc.record({ type: fc.constantFrom('string', 'number', 'integer', 'boolean', 'null', 'object', 'array') }),
      fc.record({ type: fc.constant('string'), minLength: fc.nat(4), maxLength: fc.nat(6) }, { requiredKeys: ['type'] }),
      fc.record({ type: fc.constant('string'), format: fc.constantFrom('email', 'uri', 'date', 'date-time', 'uuid', 'hostname', 'ipv4') }),
      fc.record({ type: fc.constant('number'), minimum: fc.integer({ min: -5, max: 5 }), exclusiveMaximum: fc.integer({ min: -5, max: 5 }), multipleOf: fc.integer({ min: 1, max: 4 }) }, { requiredKeys: [] }),
      fc.record({ enum: fc.uniqueArray(fc.jsonValue({ maxDepth: 1 }), { minLength: 1, maxLength: 3, selector: value => JSON.stringify(value) }) }),
      fc.record({ const: fc.jsonValue({ maxDepth: 1 }) }),
    )
    const schema = fc.letrec<{ node: object }>(tie => ({
      node: fc.oneof({ maxDepth: 3, depthIdentifier: 'schema' },
        leaf,
        fc.record({
          type: fc.constant('object'),
          properties: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node')),
          required: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { maxLength: 2 }),
          additionalProperties: fc.oneof(fc.boolean(), tie('node')),
        }, { requiredKeys: ['type'] }),
        fc.record({ type: fc.constant('array'), items: tie('node'), minItems: fc.nat(2), uniqueItems: fc.boolean() }, { requiredKeys: ['type'] }),
        fc.record({ anyOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
        fc.record({ oneOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
        fc.record({ allOf: fc.array(tie('node'), { minLength: 1, maxLength: 2 }) }),
        fc.record({ not: tie('node') }),
        fc.record({ if: tie('node'), then: tie('node'), else: tie('node') }, { requiredKeys: ['if'] }),
      ),
    })).node
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('a@b.co', '2024-02-29', 'https://x.y/z', 'x'))),
    )
    fc.assert(fc.property(schema, value, (generated, generatedData) => {
      // As parsed from the wire: fast-check also makes objects without a prototype, which JSON never holds.
      const data: unknown = JSON.parse(JSON.stringify(generatedData))
      const root = { type: ['object', 'array', 'string', 'number', 'boolean', 'null'], allOf: [generated] }
      expect(compileSchema(root)(data).valid).toBe(compileCompiled(root)(data).valid)
    }), { seed: 2300, numRuns: 600 })
  }, 60_000)

  it.each([
    ['an unknown type', { properties: { n: { type: 'nope' } } }],
    ['a type listed twice', { type: ['string', 'string'] }],
    ['a negative length', { maxLength: -1 }],
    ['a fractional count', { minItems: 1.5 }],
    ['a multipleOf of zero', { multipleOf: 0 }],
    ['a required list of non-strings', { required: [1] }],
    ['an empty anyOf', { anyOf: [] }],
    ['a subschema that is a number', { properties: { a: 5 } }],
    ['a pattern property name that is no regular expression', { patternProperties: { '(': {} } }],
    ['an $id with a fragment (2020-12)', { $defs: { a: { $id: 'https://example.com/a#x' } } }],
    ['a bad $anchor', { $defs: { a: { $anchor: '1st' } } }],
    ['a dependentRequired of non-lists', { dependentRequired: { a: 'b' } }],
    ['an items list under 2020-12', { items: [{}] }],
    ['a $ref to a missing anchor', { $ref: '#nowhere' }],
  ])('refuses %s at compile time, as the compiled validator does', (_name, schema) => {
    expect(() => compileSchema(schema)).toThrow(TypeError)
    expect(() => compileSchema(schema)).toThrow(/^Invalid JSON Schema: /)
    expect(() => compileCompiled(schema)).toThrow(/^Invalid JSON Schema: /)
  })

  it('names where the schema is wrong', () => {
    expect(() => compileSchema({ properties: { n: { type: 'nope' } } })).toThrow(/^Invalid JSON Schema: \/properties\/n\/type must be a JSON type name/)
    expect(() => compileSchema({ $defs: { 'a/b': { minLength: 'x' } } })).toThrow('Invalid JSON Schema: /$defs/a~1b/minLength must be a non-negative integer')
  })

  it('ignores keywords the dialect does not have, as ajv does', () => {
    const draft07 = { $schema: 'http://json-schema.org/draft-07/schema#', prefixItems: [{ type: 'string' }], dependentRequired: { a: ['b'] }, unevaluatedProperties: false }
    expect(compileSchema(draft07)([1]).valid).toBe(true)
    expect(compileSchema(draft07)({ a: 1, c: 2 }).valid).toBe(true)
    const draft2019 = { $schema: 'https://json-schema.org/draft/2019-09/schema', prefixItems: [{ type: 'string' }] }
    expect(compileSchema(draft2019)([1]).valid).toBe(true)
  })

  it('applies the keywords beside a draft-07 $ref, as ajv does', () => {
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', definitions: { s: { type: 'string' } }, properties: { a: { $ref: '#/definitions/s', maxLength: 1 } } }
    expect(compileSchema(schema)({ a: 'abc' })).toEqual(compileCompiled(schema)({ a: 'abc' }))
    expect(compileSchema(schema)({ a: 'abc' }).valid).toBe(false)
  })

  it('checks only the five formats, although the interpreter knows more', () => {
    for (const format of ['hostname', 'ipv4', 'ipv6', 'duration', 'regex', 'time', 'uri-reference', 'json-pointer']) {
      expect(compileSchema({ type: 'string', format })('§ not that').valid, format).toBe(true)
    }
  })

  it('resolves a $dynamicRef whose anchor is declared once, and refuses one whose anchor several resources declare', () => {
    const list = compileSchema({ $dynamicAnchor: 'node', type: 'array', items: { $dynamicRef: '#node' } })
    expect(list([[], [[]]]).valid).toBe(true)
    expect(list([[1]])).toMatchObject({ valid: false, message: '/0/0: must be array' })
    const extended = {
      $id: 'https://example.com/strict', $dynamicAnchor: 'node', $ref: 'tree',
      $defs: { tree: { $id: 'tree', $dynamicAnchor: 'node', type: 'object', properties: { kids: { items: { $dynamicRef: '#node' } } } } },
    }
    expect(() => compileSchema(extended)).toThrow(new TypeError('Unsupported JSON Schema: $dynamicRef "#node" names a $dynamicAnchor declared 2 times, which the interpreted validator cannot resolve (use $ref, or the compiled validator)'))
  })

  it('finds an anchor in its own resource, not one of the same name in an embedded resource', () => {
    const validate = compileSchema({
      $id: 'https://example.com/base.json', $ref: '#n',
      $defs: { outer: { $anchor: 'n', maximum: 10 }, inner: { $id: 'https://example.com/inner/', $anchor: 'n', maximum: 2 } },
    })
    expect(validate(5).valid).toBe(true)
    expect(validate(50)).toMatchObject({ valid: false, message: 'must be <= 10' })
  })

  it('validates a value that is not JSON as the JSON it serializes to', () => {
    const validate = compileSchema({ type: 'object', properties: { sum: { type: 'number' }, note: { type: 'string' } }, required: ['sum'] })
    expect(validate({ sum: 1, note: undefined }).valid).toBe(true)
    expect(validate({ sum: undefined })).toMatchObject({ valid: false, message: "must have required property 'sum'" })
    expect(validate({ sum: 1, note: () => 'x' }).valid).toBe(true)
    expect(validate({ sum: 1n })).toEqual({ valid: false, message: 'must be a JSON value', errors: [{ path: '', message: 'must be a JSON value' }] })
  })

  it('refuses a member name that is not well-formed Unicode (a lone surrogate) where the interpreter must name it', () => {
    const validate = compileSchema({ type: 'object', additionalProperties: { type: 'string' } })
    expect(validate(JSON.parse('{"\\ud800": "x"}'))).toEqual({ valid: false, message: 'property names must be well-formed Unicode', errors: [{ path: '', message: 'property names must be well-formed Unicode' }] })
    // Where no rule visits the name, there is nothing to refuse.
    expect(compileSchema({ type: 'object' })(JSON.parse('{"\\ud800": "x"}')).valid).toBe(true)
  })

  it('is the JsonSchemaCompiler of this module', () => {
    expect(interpretedJsonSchema.compileSchema).toBe(compileSchema)
    expect(interpretedJsonSchema.isSecureSchema).toBe(isSecureSchema)
    expect(Object.isFrozen(interpretedJsonSchema)).toBe(true)
  })
})
