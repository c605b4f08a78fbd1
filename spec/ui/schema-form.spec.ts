import { describe, expect, it } from 'vitest'
import { initialValue, toValue, type Schema } from '../../ui/schema-form.tsx'

const schema: Schema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2 },
    count: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
    ratio: { type: 'number' },
    isOn: { type: 'boolean', default: true },
    color: { type: 'string', enum: ['red', 'green'], default: 'green' },
    size: { oneOf: [{ const: 1, title: 'small' }, { const: 2, title: 'large' }] },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, default: ['a'] },
    points: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
    nested: { type: 'object', properties: { deep: { type: 'string', pattern: '^d' } }, required: ['deep'] },
    anything: {},
  },
  required: ['name', 'count'],
}

describe('initialValue', () => {
  it('holds every default, numbers as text and choices as JSON', () => {
    expect(initialValue(schema)).toEqual({
      name: '', count: '3', ratio: '', isOn: true, color: '"green"', size: '', tags: ['a'], points: [], nested: { deep: '' }, anything: '',
    })
  })
})

describe('toValue', () => {
  it('turns the defaults and typed text into the arguments the schema describes', () => {
    const errors: string[] = []
    const raw = { ...(initialValue(schema) as object), name: 'Ada', ratio: '0.5', size: '2', points: [{ x: '1' }], anything: '{"a":[1]}' }
    expect(toValue(schema, raw, '', errors)).toEqual({
      name: 'Ada', count: 3, ratio: 0.5, isOn: true, color: 'green', size: 2, tags: ['a'], points: [{ x: 1 }], anything: { a: [1] },
    })
    expect(errors).toEqual([])
  })

  it.each([
    [{ name: '' }, 'name is required'],
    [{ name: 'A' }, 'name needs at least 2 characters'],
    [{ count: '' }, 'count is required'],
    [{ count: '11' }, 'count must be at most 10'],
    [{ count: '1.5' }, 'count must be a whole number'],
    [{ ratio: 'abc' }, 'ratio must be a number'],
    [{ color: '"blue"' }, 'color must be one of red, green'],
    [{ nested: { deep: 'x' } }, 'nested.deep must match ^d'],
    [{ points: [{ x: '' }] }, 'points.0.x is required'],
    [{ anything: '{' }, 'anything is not JSON'],
  ])('refuses %j: %s', (change, message) => {
    const errors: string[] = []
    toValue(schema, { ...(initialValue(schema) as object), name: 'Ada', ...change }, '', errors)
    expect(errors).toContain(message)
  })
})
