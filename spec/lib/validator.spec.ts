import { describe, expect, it, vi } from 'vitest'
import {
  applyDefaults, canGenerateCode, checkSchemaShape, dialectOf, jsonSchemaSource, lazyValidator, loadedJsonSchema, loadJsonSchema,
  type JsonSchemaCompiler,
} from '../../lib/validator.ts'
import { compiledJsonSchema } from '../../lib/json-schema.ts'
import { interpretedJsonSchema } from '../../lib/json-schema-interpreted.ts'

/*
 * The order of the cases matters: each source loads its module once per process (this file's
 * worker), and the first case of each sees it unloaded; the last case reloads the modules.
 */
describe.each([
  ['compiled', compiledJsonSchema],
  ['interpreted', interpretedJsonSchema],
] as const)('lazyValidator (%s)', (choice, expected) => {
  const source = jsonSchemaSource(choice)

  it('loads the validator on its first call, answers with a Promise then, and synchronously after', async () => {
    expect(source.loaded()).toBeUndefined()
    const validate = lazyValidator({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, source)
    const first = validate({ text: 1 })
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toMatchObject({ valid: false, message: '/text: must be string' })
    expect(source.loaded()).toBe(expected)
    expect(validate({ text: 'hi' })).toEqual({ valid: true })
    // A validator made after the load compiles on its first call and never returns a Promise.
    expect(lazyValidator({ type: 'integer' }, source)(1.5)).toMatchObject({ valid: false })
  })

  it('rejects with a TypeError naming the reason when the validator refuses the schema', async () => {
    const validate = lazyValidator({ type: 'object', properties: { n: { type: 'nope' } } }, source)
    await expect(async () => validate({})).rejects.toThrow(TypeError)
    await expect(async () => validate({})).rejects.toThrow(/Invalid JSON Schema/)
  })

  it('loads once and hands every caller the same validator', async () => {
    const [a, b] = await Promise.all([source.load(), source.load()])
    expect(a).toBe(b)
    expect(a).toBe(expected)
    expect(a.isSecureSchema({ type: 'string', pattern: '(a+)+$' })).toBe(false)
  })
})

describe('jsonSchemaSource', () => {
  it('takes a validator of the user\'s own as it is, calling it as an object', async () => {
    class Everything implements JsonSchemaCompiler {
      readonly verdict = { valid: true } as const
      compileSchema() { return () => this.verdict }
      isSecureSchema() { return true }
    }
    const own = new Everything()
    const source = jsonSchemaSource(own)
    expect(source.loaded()).toBe(own)
    expect(await source.load()).toBe(own)
    expect(lazyValidator({ type: 'string' }, source)(1)).toEqual({ valid: true })
  })

  it('returns one shared source per string choice', () => {
    expect(jsonSchemaSource('interpreted')).toBe(jsonSchemaSource('interpreted'))
    expect(jsonSchemaSource()).toBe(jsonSchemaSource('auto'))
    expect(jsonSchemaSource('compiled')).not.toBe(jsonSchemaSource('interpreted'))
  })

  it.each([['ajv'], [{ compileSchema: () => () => ({ valid: true }) }], [null]])('throws TypeError for the option %j', option => {
    expect(() => jsonSchemaSource(option as never)).toThrow(TypeError)
    expect(() => jsonSchemaSource(option as never)).toThrow(/jsonSchemaValidator must be 'auto', 'compiled', 'interpreted' or an object/)
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

describe('loadJsonSchema', () => {
  it('loads the compiled validator where code generation is allowed (the default choice, auto)', async () => {
    expect(canGenerateCode()).toBe(true)
    expect(await loadJsonSchema()).toBe(compiledJsonSchema)
    expect(loadedJsonSchema()).toBe(compiledJsonSchema)
  })

  it('loads the interpreted validator where new Function throws, probing once', async () => {
    // A fresh copy of the module, whose probe has not run, in a runtime that refuses code generation.
    vi.resetModules()
    const refuse = vi.fn(function refused() { throw new EvalError('Code generation from strings disallowed for this context') })
    vi.stubGlobal('Function', refuse)
    try {
      const fresh = await import('../../lib/validator.ts')
      expect(fresh.canGenerateCode()).toBe(false)
      const loaded = await fresh.loadJsonSchema()
      const { interpretedJsonSchema: freshInterpreted } = await import('../../lib/json-schema-interpreted.ts')
      expect(loaded).toBe(freshInterpreted)
      expect(fresh.jsonSchemaSource('auto').loaded()).toBe(freshInterpreted)
      expect(loaded.compileSchema({ type: 'integer' })(1.5)).toMatchObject({ valid: false, message: 'must be integer' })
      expect(refuse).toHaveBeenCalledTimes(1)
    } finally {
      vi.unstubAllGlobals()
    }
  })
})
