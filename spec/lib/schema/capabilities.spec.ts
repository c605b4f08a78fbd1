import { describe, expect, it } from 'vitest'
import { hasCapability, requiredCapability } from '../../../lib/schema/capabilities.ts'

describe('requiredCapability', () => {
  it.each([
    ['tools/call', undefined, ['tools']],
    ['resources/subscribe', undefined, ['resources', 'subscribe']],
    ['completion/complete', undefined, ['completions']],
    ['sampling/createMessage', {}, ['sampling']],
    ['sampling/createMessage', { tools: [] }, ['sampling', 'tools']],
    ['elicitation/create', { mode: 'url' }, ['elicitation', 'url']],
    ['elicitation/create', {}, ['elicitation']],
    ['ping', undefined, undefined],
    ['initialize', undefined, undefined],
  ])('%s %j needs %j', (method, params, path) => {
    expect(requiredCapability(method, params)).toEqual(path)
  })
})

describe('hasCapability', () => {
  it.each([
    [{ tools: {} }, ['tools'], true],
    [{ tools: {} }, ['tools', 'listChanged'], false],
    [{ resources: { subscribe: true } }, ['resources', 'subscribe'], true],
    [{ resources: { subscribe: false } }, ['resources', 'subscribe'], false],
    [{}, ['sampling'], false],
    [undefined, ['sampling'], false],
    [{ elicitation: { url: {} } }, ['elicitation', 'url'], true],
    [Object.create({ tools: {} }), ['tools'], false],
  ])('%j has %j: %s', (capabilities, path, expected) => {
    expect(hasCapability(capabilities, path)).toBe(expected)
  })
})
