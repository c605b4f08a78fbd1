import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { isStandardSchema, standardJsonSchema, validateStandard, type StandardSchemaV1 } from '../../lib/standard-schema.ts'

/** A schema that answers with the given result, as a library would. */
function answering(result: unknown, jsonSchema?: object): StandardSchemaV1 {
  return {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: () => result as never,
      ...(jsonSchema === undefined ? {} : { jsonSchema: { input: () => ({ ...jsonSchema, from: 'input' }), output: () => ({ ...jsonSchema, from: 'output' }) } }),
    },
  }
}

describe('isStandardSchema', () => {
  it.each([
    ['a zod schema', z.object({}), true],
    ['a hand-made schema', answering({ value: 1 }), true],
    ['a callable schema', Object.assign(() => {}, { '~standard': { version: 1, vendor: 'fn', validate: () => ({ value: 1 }) } }), true],
    ['a JSON Schema', { type: 'object' }, false],
    ['another version', { '~standard': { version: 2, vendor: 'x', validate: () => ({ value: 1 }) } }, false],
    ['no validate', { '~standard': { version: 1, vendor: 'x' } }, false],
    ['null', null, false],
    ['a string', 'schema', false],
  ])('tells %s: %s', (_name, value, expected) => {
    expect(isStandardSchema(value)).toBe(expected)
  })
})

describe('validateStandard', () => {
  it('gives the value back when valid', () => {
    expect(validateStandard(z.object({ n: z.number().default(3) }), {})).toEqual({ valid: true, value: { n: 3 } })
  })

  it('joins issues into one line with their paths as JSON Pointers', () => {
    const verdict = validateStandard(answering({
      issues: [
        { message: 'bad a/b', path: ['a/b', { key: 0 }] },
        { message: 'bad tilde', path: [{ key: 'x~y' }] },
        { message: 'root\nproblem' },
        { message: 'symbol', path: [Symbol('s')] },
      ],
    }), {})
    expect(verdict).toEqual({
      valid: false,
      message: '/a~1b/0: bad a/b; /x~0y: bad tilde; root\\u000aproblem; /Symbol(s): symbol',
      errors: [
        { path: '/a~1b/0', message: 'bad a/b' },
        { path: '/x~0y', message: 'bad tilde' },
        { path: '', message: 'root\nproblem' },
        { path: '/Symbol(s)', message: 'symbol' },
      ],
    })
  })

  it('says the value is invalid when there are no issue messages', () => {
    expect(validateStandard(answering({ issues: [] }), 1)).toEqual({ valid: false, message: 'value is invalid', errors: [] })
  })

  it('answers with a Promise when the schema does', async () => {
    const verdict = validateStandard(answering(Promise.resolve({ issues: [{ message: 'later', path: ['n'] }] })), {})
    expect(verdict).toBeInstanceOf(Promise)
    expect(await verdict).toEqual({ valid: false, message: '/n: later', errors: [{ path: '/n', message: 'later' }] })
  })

  it('throws what the schema throws', () => {
    const throwing: StandardSchemaV1 = { '~standard': { version: 1, vendor: 't', validate: () => { throw new RangeError('boom') } } }
    expect(() => validateStandard(throwing, 1)).toThrow(new RangeError('boom'))
  })
})

describe('standardJsonSchema', () => {
  it('converts a zod schema to 2020-12 without the default $schema', () => {
    expect(standardJsonSchema(z.object({ a: z.string() }), 'input')).toEqual({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })
    expect(standardJsonSchema(z.object({ a: z.string() }), 'output')).toEqual({
      type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false,
    })
  })

  it('keeps a $schema that names another dialect, and asks for the direction given', () => {
    const schema = answering({ value: 1 }, { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })
    expect(standardJsonSchema(schema, 'input')).toEqual({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', from: 'input' })
    expect(standardJsonSchema(schema, 'output')).toMatchObject({ from: 'output' })
  })

  it('gives undefined for a schema without a converter, and lets a converter error through', () => {
    expect(standardJsonSchema(answering({ value: 1 }), 'input')).toBeUndefined()
    expect(() => standardJsonSchema(z.object({ at: z.date() }), 'input')).toThrow(/Date cannot be represented in JSON Schema/)
  })
})
