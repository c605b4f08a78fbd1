/**
 * The JSON Schema compiler (ajv) loads on the first tools/call that needs it, never at import or
 * initialize. The order of the cases matters: the compiler is module state of this file's worker.
 */
import { describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { loadedJsonSchema } from '../../lib/validator.ts'
import { InternalError } from '../../lib/jsonrpc/errors.ts'
import { connectInMemory } from '../../testing.ts'

const text = { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] }
const broken = { type: 'object' as const, properties: { n: { type: 'not-a-type' } } }

describe('createServer (JSON Schema compiled lazily)', () => {
  it('answers initialize and tools/list without loading the compiler, and loads it on the first call', async () => {
    const server = createServer({ name: 'lazy', version: '1.0.0' })
    server.tool('echo', { inputSchema: text }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
    // Refused only by the compiler: registration cannot see it before the compiler is loaded.
    server.tool('broken', { inputSchema: broken }, () => ({ content: [] }))
    await using pair = await connectInMemory(server)
    expect((await pair.client.listTools()).tools.map(tool => tool.name)).toEqual(['echo', 'broken'])
    expect(loadedJsonSchema()).toBeUndefined()

    const invalid = await pair.client.callTool('echo', { text: 1 })
    expect(invalid).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Invalid arguments for tool echo: /text: must be string' }] })
    expect(loadedJsonSchema()).toBeDefined()
    expect(await pair.client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] })

    const failure = await pair.client.callTool('broken', { n: 1 }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(InternalError)
    expect((failure as InternalError).code).toBe(-32603)
    expect((failure as InternalError).message).toMatch(/Tool "broken": inputSchema: Invalid JSON Schema/)
    // The session lives on.
    expect(await pair.client.callTool('echo', { text: 'still' })).toEqual({ content: [{ type: 'text', text: 'still' }] })
  })

  it('refuses a bad schema at registration once the compiler is loaded', () => {
    const server = createServer({ name: 'eager', version: '1.0.0' })
    expect(() => server.tool('broken', { inputSchema: broken }, () => ({ content: [] }))).toThrow(TypeError)
    expect(() => server.tool('broken', { inputSchema: broken }, () => ({ content: [] }))).toThrow(/Tool "broken": inputSchema: Invalid JSON Schema/)
  })

  it('refuses an unsupported dialect at registration, compiler or not', () => {
    const server = createServer({ name: 'dialect', version: '1.0.0' })
    expect(() => server.tool('old', { inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } }, () => ({ content: [] })))
      .toThrow(/Unsupported JSON Schema dialect/)
  })
})
