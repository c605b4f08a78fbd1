import { describe, expect, it } from 'vitest'
import { applyDefaults, checkSchemaShape, dialectOf, lazyValidator, loadedJsonSchema, loadJsonSchema } from '../../lib/validator.ts'

describe('lazyValidator', () => {
  it('loads the compiler on its first call, answers with a Promise then, and synchronously after', async () => {
    expect(loadedJsonSchema()).toBeUndefined()
    const validate = lazyValidator({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })
    const first = validate({ text: 1 })
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toMatchObject({ valid: false, message: '/text: must be string' })
    expect(loadedJsonSchema()).toBeDefined()
    expect(validate({ text: 'hi' })).toEqual({ valid: true })
    // A validator made after the load compiles on its first call and never returns a Promise.
    expect(lazyValidator({ type: 'integer' })(1.5)).toMatchObject({ valid: false })
  })

  it('rejects with a TypeError naming the reason when the compiler refuses the schema', async () => {
    const validate = lazyValidator({ type: 'object', properties: { n: { type: 'nope' } } })
    await expect(async () => validate({})).rejects.toThrow(TypeError)
    await expect(async () => validate({})).rejects.toThrow(/Invalid JSON Schema/)
  })
})

describe('loadJsonSchema', () => {
  it('loads once and hands every caller the same compiler', async () => {
    const [a, b] = await Promise.all([loadJsonSchema(), loadJsonSchema()])
    expect(a).toBe(b)
    expect(a.isSecureSchema({ type: 'string', pattern: '(a+)+$' })).toBe(false)
  })
})

describe('checkSchemaShape', () => {
  it.each([
    [[], 'A JSON Schema must be an object'],
    [null, 'A JSON Schema must be an object'],
    ['{}', 'A JSON Schema must be an object'],
    [{ $schema: 1 }, '$schema must be a string'],
    [{ $schema: 'https://json-schema.org/draft-04/schema#' }, 'Unsupported JSON Schema dialect'],
  ])('refuses %j without compiling it', (schema, message) => {
    expect(() => checkSchemaShape(schema)).toThrow(TypeError)
    expect(() => checkSchemaShape(schema)).toThrow(message)
  })

  it('accepts every supported dialect, with or without scheme and trailing #', () => {
    for (const id of ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft/2019-09/schema#', 'http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-06/schema']) {
      expect(() => checkSchemaShape({ $schema: id })).not.toThrow()
    }
    expect(dialectOf({ $schema: 'http://json-schema.org/draft-06/schema#' }).dialect).toBe('draft-07')
    expect(dialectOf({}).dialect).toBe('2020-12')
  })
})

describe('applyDefaults', () => {
  it('fills defaults without touching prototypes', () => {
    const schema = { type: 'object', properties: { n: { type: 'number', default: 3 }, tags: { default: ['a'] } } }
    const filled = applyDefaults(schema, JSON.parse('{"__proto__": {"polluted": true}}'))
    expect(filled).toEqual({ n: 3, tags: ['a'] })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
