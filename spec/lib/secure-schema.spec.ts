import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Ajv } from 'ajv'
import secureMetaSchema from 'ajv/dist/refs/json-schema-secure.json' with { type: 'json' }
import { isSecureSchema } from '../../lib/secure-schema.ts'

/** ajv's own check against its secure meta-schema: what isSecureSchema replaced, as the reference. */
const ajvSecure = new Ajv({ strict: false, logger: false }).compile(secureMetaSchema)

describe('isSecureSchema', () => {
  it.each([
    ['a plain object schema', { type: 'object', properties: { a: { type: 'string' } } }, true],
    ['a pattern without maxLength', { type: 'string', pattern: '^(a+)+$' }, false],
    ['a pattern with maxLength', { type: 'string', pattern: '^(a+)+$', maxLength: 64 }, true],
    ['a format without maxLength', { type: 'string', format: 'email' }, false],
    ['patternProperties without propertyNames', { patternProperties: { '^x': {} } }, false],
    ['patternProperties with a bounded propertyNames', { patternProperties: { '^x': {} }, propertyNames: { maxLength: 20 } }, true],
    ['uniqueItems over objects without maxItems', { type: 'array', uniqueItems: true, items: { type: 'object' } }, false],
    ['uniqueItems over strings without maxItems', { type: 'array', uniqueItems: true, items: { type: 'string' } }, true],
    ['uniqueItems over anything without maxItems', { type: 'array', uniqueItems: true }, false],
    ['an empty anyOf', { anyOf: [] }, false],
    ['a slow pattern deep in properties', { properties: { a: { items: { properties: { b: { pattern: 'x' } } } } } }, false],
    ['a slow pattern under $defs', { $defs: { s: { type: 'string', pattern: '(a|a)*$' } }, properties: { a: { $ref: '#/$defs/s' } } }, false],
    ['a slow pattern under prefixItems', { prefixItems: [{ pattern: '(a|a)*$' }] }, false],
    ['a slow pattern in a tuple items list', { items: [{ pattern: '(a|a)*$' }] }, false],
    ['a slow pattern under dependentSchemas', { dependentSchemas: { a: { pattern: '(a|a)*$' } } }, false],
    ['a slow pattern under unevaluatedProperties', { unevaluatedProperties: { pattern: '(a|a)*$' } }, false],
    ['boolean subschemas', { properties: { a: true, b: false }, additionalProperties: false }, true],
  ])('judges %s: %s', (_name, schema, expected) => {
    expect(isSecureSchema(schema)).toBe(expected)
  })

  it('refuses a schema nested too deeply to walk, and one that holds a cycle', () => {
    let deep: object = {}
    for (let depth = 0; depth < 100_000; depth++) deep = { not: deep }
    expect(isSecureSchema(deep)).toBe(false)
    const cyclic: Record<string, unknown> = { type: 'object' }
    cyclic.properties = { self: cyclic }
    expect(isSecureSchema(cyclic)).toBe(false)
    // The same subschema object in two places is no cycle.
    const shared = { type: 'string' }
    expect(isSecureSchema({ properties: { a: shared, b: shared } })).toBe(true)
  })

  it('refuses whatever ajv\'s secure meta-schema refuses, and agrees with it where that looks (property)', () => {
    const leaf = fc.record({
      type: fc.constantFrom('string', 'object', 'array', ['string', 'array']),
      pattern: fc.constant('^a+$'), format: fc.constant('date'), maxLength: fc.nat(9), maxItems: fc.nat(9),
      uniqueItems: fc.boolean(), propertyNames: fc.oneof(fc.constant(true), fc.record({ maxLength: fc.nat(9) }, { requiredKeys: [] })),
    }, { requiredKeys: [] })
    // Only the keywords ajv's meta-schema descends into: there the two must agree exactly.
    const schema = fc.letrec<{ node: unknown }>(tie => ({
      node: fc.oneof({ maxDepth: 3, depthIdentifier: 'secure' },
        leaf,
        fc.boolean(),
        fc.record({ properties: fc.dictionary(fc.constantFrom('a', 'b'), tie('node')), patternProperties: fc.dictionary(fc.constantFrom('^x'), tie('node')) }, { requiredKeys: [] }),
        fc.record({ items: tie('node'), uniqueItems: fc.boolean(), maxItems: fc.nat(3) }, { requiredKeys: ['items'] }),
        fc.record({ anyOf: fc.array(tie('node'), { maxLength: 2 }), not: tie('node') }, { requiredKeys: [] }),
        fc.record({ if: tie('node'), then: tie('node'), additionalProperties: tie('node') }, { requiredKeys: [] }),
      ),
    })).node
    fc.assert(fc.property(schema, generated => {
      const root = { allOf: [generated] }
      expect(isSecureSchema(root)).toBe(ajvSecure(root) === true)
    }), { seed: 23, numRuns: 1500 })
  })
})
