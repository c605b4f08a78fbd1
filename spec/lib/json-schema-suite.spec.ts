/**
 * The official JSON Schema Test Suite (draft 2020-12, the part vendored under
 * spec/fixtures/json-schema-test-suite/) through both validators: each verdict must be the
 * suite's, and the two validators must agree. The few departures are listed below, each with its
 * reason, and each is checked to still be one (a fixed departure fails until it leaves the list).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { compileSchema as compileCompiled } from '../../lib/json-schema.ts'
import { compileSchema as compileInterpreted } from '../../lib/json-schema-interpreted.ts'

const SUITE = fileURLToPath(new URL('../fixtures/json-schema-test-suite/draft2020-12/', import.meta.url))

const VALIDATORS = { compiled: compileCompiled, interpreted: compileInterpreted } as const
type ValidatorName = keyof typeof VALIDATORS

/** What a validator made of a case: a verdict, or a TypeError when compiling the schema. */
type Outcome = 'valid' | 'invalid' | 'refused'

interface SuiteTest { description: string; data: unknown; valid: boolean }
interface SuiteGroup { description: string; schema: object | boolean; tests: SuiteTest[] }

/** Cases where a validator's outcome is not the suite's, on purpose or for want of a feature. */
interface Departure {
  file: string
  /** The group's description; every group of the file when absent. */
  group?: string
  /** The tests' descriptions; every test of the group when absent. */
  tests?: readonly string[]
  validators: readonly ValidatorName[]
  reason: string
}

const BOTH = ['compiled', 'interpreted'] as const

const DEPARTURES: readonly Departure[] = [
  {
    file: 'enum.json', group: 'empty enum', validators: BOTH,
    reason: 'an empty enum is refused at compile time as the schema mistake it is (no value could match), as ajv refuses it',
  },
  {
    file: 'format.json', validators: BOTH,
    tests: ['email', 'date', 'date-time', 'uri', 'uuid'].map(format => `invalid ${format} string is only an annotation by default`),
    reason: 'rxmcp asserts these five formats (elicitation forms rely on them); the suite takes format as an annotation by default',
  },
  {
    file: 'optional/format/email.json', validators: BOTH,
    tests: [
      'a quoted string with a space in the local part is valid', 'a quoted string with a double dot in the local part is valid',
      'a quoted string with a @ in the local part is valid', 'an IPv4-address-literal after the @ is valid', 'an IPv6-address-literal after the @ is valid',
    ],
    reason: 'the email rule is what a form needs (lib/schema-formats.ts): quoted local parts and address literals are refused',
  },
  {
    file: 'optional/format/uri.json', validators: BOTH,
    tests: ['invalid userinfo', 'non-numeric port is invalid', 'leading zero in an embedded IPv4 address is invalid', 'square brackets are not allowed in a path segment'],
    reason: 'the uri rule checks the scheme and the characters a URI may hold, not the grammar of its authority and path',
  },
  {
    file: 'properties.json', group: 'properties whose names are Javascript object property names', tests: ['__proto__ not valid'], validators: ['compiled'],
    reason: 'ajv does not check a property named __proto__ under properties (its design); the interpreter does',
  },
  ...['Recursive references between schemas', 'refs with relative uris and defs', 'relative refs with absolute uris and defs',
    'simple URN base URI with $ref via the URN', 'URN ref with nested pointer ref'].map(group => ({
    file: 'ref.json', group, validators: ['compiled'] as const,
    reason: 'ajv, which registers no schema under its $id (so tools with one $id never see each other), cannot resolve these references between embedded resources, or URN bases: it refuses the schema at compile time',
  })),
  ...[['defs.json', 'validate definition against metaschema'], ['ref.json', 'remote ref, containing refs itself']].map(([file, group]) => ({
    file: file!, group, validators: ['interpreted'] as const,
    reason: 'a $ref to the 2020-12 meta-schema: ajv carries the meta-schemas, the interpreted validator does not and refuses the schema at compile time',
  })),
]

/** The departures some case matched, to find stale entries at the end. */
const matched = new Set<Departure>()

function departureOf(file: string, group: string, test: string, validator: ValidatorName): Departure | undefined {
  const found = DEPARTURES.find(each => each.file === file && (each.group === undefined || each.group === group)
    && (each.tests === undefined || each.tests.includes(test)) && each.validators.includes(validator))
  if (found !== undefined) matched.add(found)
  return found
}

function outcomeOf(validator: ValidatorName, schema: object | boolean, data: unknown): Outcome {
  // rxmcp compiles object schemas (a tool's schema is one); a boolean one is the same as allOf of it.
  const root = typeof schema === 'boolean' ? { allOf: [schema] } : schema
  let validate
  try {
    validate = VALIDATORS[validator](root)
  } catch (error) {
    expect(error, `${validator} throws only TypeErrors`).toBeInstanceOf(TypeError)
    return 'refused'
  }
  return validate(data).valid ? 'valid' : 'invalid'
}

/** Every vendored file, `optional/format/` ones included, by path under draft2020-12/. */
const FILES = readdirSync(SUITE, { recursive: true, encoding: 'utf8' }).filter(file => file.endsWith('.json')).sort()

describe('the JSON Schema Test Suite (2020-12) through both validators', () => {
  it('holds the files of the keywords MCP schemas use', () => {
    for (const file of ['type.json', 'properties.json', 'required.json', 'additionalProperties.json', 'enum.json', 'const.json', 'items.json', 'prefixItems.json', 'ref.json', 'defs.json', 'anyOf.json', 'oneOf.json', 'if-then-else.json', 'optional/format/date-time.json']) {
      expect(FILES).toContain(file)
    }
  })

  describe.each(FILES)('%s', file => {
    const groups = JSON.parse(readFileSync(join(SUITE, file), 'utf8')) as SuiteGroup[]
    it.each(groups)('$description', group => {
      for (const test of group.tests) {
        const expected: Outcome = test.valid ? 'valid' : 'invalid'
        const outcomes = { compiled: outcomeOf('compiled', group.schema, test.data), interpreted: outcomeOf('interpreted', group.schema, test.data) }
        for (const validator of BOTH) {
          const departure = departureOf(file, group.description, test.description, validator)
          const label = `${validator}: ${test.description}`
          if (departure === undefined) expect(outcomes[validator], label).toBe(expected)
          else expect(outcomes[validator], `${label} (listed as a departure: ${departure.reason})`).not.toBe(expected)
        }
        // Where the suite and a validator part on purpose for both, the two still agree.
        const isOneSided = BOTH.some(validator => departureOf(file, group.description, test.description, validator)?.validators.length === 1)
        if (!isOneSided) expect(outcomes.compiled, `the validators agree: ${test.description}`).toBe(outcomes.interpreted)
      }
    })
  })

  it('lists no departure that no case shows', () => {
    expect(DEPARTURES.filter(departure => !matched.has(departure))).toEqual([])
  })
})
