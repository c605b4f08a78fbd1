/**
 * The JSON Schema validator loads on the first tools/call that needs it, never at import or
 * initialize: the default choice (auto, which is ajv where code generation is allowed) and the
 * interpreted one alike. The order of the cases matters: a loaded validator is module state of
 * this file's worker.
 */
import { describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { jsonSchemaSource, type JsonSchemaValidatorOption } from '../../lib/validator.ts'
import { InternalError } from '../../lib/jsonrpc/errors.ts'
import { connectInMemory } from '../../testing.ts'

const text = { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] }
const broken = { type: 'object' as const, properties: { n: { type: 'not-a-type' } } }

describe('createServer (JSON Schema compiled lazily)', () => lazyCases('auto'))
describe('createServer (JSON Schema compiled lazily, interpreted validator)', () => lazyCases('interpreted'))

/** The cases, for a server with the validator `choice`. */
function lazyCases(choice: JsonSchemaValidatorOption): void {
  const loaded = () => jsonSchemaSource(choice).loaded()

  it('answers initialize and tools/list without loading the compiler, and loads it on the first call', async () => {
    const server = createServer({ name: 'lazy', version: '1.0.0' }, { jsonSchemaValidator: choice })
    server.tool('echo', { inputSchema: text }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
    // Refused only by the compiler: registration cannot see it before the compiler is loaded.
    server.tool('broken', { inputSchema: broken }, () => ({ content: [] }))
    await using pair = await connectInMemory(server)
    expect((await pair.client.listTools()).tools.map(tool => tool.name)).toEqual(['echo', 'broken'])
    expect(loaded()).toBeUndefined()

    const invalid = await pair.client.callTool('echo', { text: 1 })
    expect(invalid).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Invalid arguments for tool echo: /text: must be string' }] })
    expect(loaded()).toBeDefined()
    expect(await pair.client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] })

    const failure = await pair.client.callTool('broken', { n: 1 }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(InternalError)
    expect((failure as InternalError).code).toBe(-32603)
    expect((failure as InternalError).message).toMatch(/Tool "broken": inputSchema: Invalid JSON Schema/)
    // The session lives on.
    expect(await pair.client.callTool('echo', { text: 'still' })).toEqual({ content: [{ type: 'text', text: 'still' }] })
  })

  it('refuses a bad schema at registration once the compiler is loaded', () => {
    const server = createServer({ name: 'eager', version: '1.0.0' }, { jsonSchemaValidator: choice })
    expect(() => server.tool('broken', { inputSchema: broken }, () => ({ content: [] }))).toThrow(TypeError)
    expect(() => server.tool('broken', { inputSchema: broken }, () => ({ content: [] }))).toThrow(/Tool "broken": inputSchema: Invalid JSON Schema/)
  })

  it('refuses an unsupported dialect at registration, compiler or not', () => {
    const server = createServer({ name: 'dialect', version: '1.0.0' }, { jsonSchemaValidator: choice })
    expect(() => server.tool('old', { inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } }, () => ({ content: [] })))
      .toThrow(/Unsupported JSON Schema dialect/)
  })
}
