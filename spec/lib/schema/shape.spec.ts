import { describe, expect, it } from 'vitest'
import { FIELDS_SINCE, shapeResult } from '../../../lib/schema/shape.ts'
import { createServer } from '../../../actors/server.ts'
import { connectInMemory } from '../../../testing.ts'
import type { JsonObject } from '../../../lib/jsonrpc/message.ts'

const icon = [{ src: 'https://example.com/i.png' }]
const tool = {
  name: 'echo', title: 'Echo', description: 'd', inputSchema: { type: 'object' }, outputSchema: { type: 'object' },
  annotations: { readOnlyHint: true }, execution: { taskSupport: 'optional' }, icons: icon, _meta: { k: 1 },
}
const toolsList = { tools: [tool] } as unknown as JsonObject

describe('shapeResult', () => {
  it.each([
    ['2024-11-05', ['description', 'inputSchema', 'name']],
    ['2025-03-26', ['annotations', 'description', 'inputSchema', 'name']],
    ['2025-06-18', ['_meta', 'annotations', 'description', 'inputSchema', 'name', 'outputSchema', 'title']],
    ['2025-11-25', ['_meta', 'annotations', 'description', 'execution', 'icons', 'inputSchema', 'name', 'outputSchema', 'title']],
  ])('sends a %s peer only the tool fields its revision defines', (version, fields) => {
    const shaped = shapeResult('tools/list', toolsList, version) as { tools: JsonObject[] }
    expect(Object.keys(shaped.tools[0]!).sort()).toEqual(fields)
  })

  it('returns the very result at the newest revision, and leaves the original untouched when it copies', () => {
    expect(shapeResult('tools/list', toolsList, '2025-11-25')).toBe(toolsList)
    const before = JSON.stringify(toolsList)
    shapeResult('tools/list', toolsList, '2024-11-05')
    expect(JSON.stringify(toolsList)).toBe(before)
    const plain = { tools: [{ name: 'a', inputSchema: { type: 'object' } }] } as unknown as JsonObject
    expect(shapeResult('tools/list', plain, '2024-11-05')).toBe(plain)
  })

  it.each([
    ['2024-11-05', { name: 's', version: '1' }, { logging: {} }],
    ['2025-03-26', { name: 's', version: '1' }, { logging: {}, completions: {} }],
    ['2025-06-18', { name: 's', version: '1', title: 'S' }, { logging: {}, completions: {} }],
  ])('shapes serverInfo and capabilities of initialize for %s', (version, serverInfo, capabilities) => {
    const result = {
      protocolVersion: version,
      serverInfo: { name: 's', version: '1', title: 'S', icons: icon, description: 'x', websiteUrl: 'https://example.com' },
      capabilities: { logging: {}, completions: {}, tasks: {} },
    } as unknown as JsonObject
    expect(shapeResult('initialize', result, version)).toEqual({ protocolVersion: version, serverInfo, capabilities })
  })

  it.each([
    ['resources/list', 'resources', { uri: 'a://b', name: 'b', title: 'B', icons: icon, _meta: {}, size: 3 }, { uri: 'a://b', name: 'b', size: 3 }],
    ['resources/templates/list', 'resourceTemplates', { uriTemplate: 'a://{x}', name: 'x', title: 'X', icons: icon }, { uriTemplate: 'a://{x}', name: 'x' }],
    ['prompts/list', 'prompts', { name: 'p', title: 'P', arguments: [{ name: 'a', title: 'A', required: true }] }, { name: 'p', arguments: [{ name: 'a', required: true }] }],
  ])('shapes %s items for 2024-11-05', (method, key, item, expected) => {
    expect(shapeResult(method, { [key]: [item] } as unknown as JsonObject, '2024-11-05')).toEqual({ [key]: [expected] })
  })

  it('drops structuredContent before 2025-06-18 and keeps it from then on', () => {
    const result = { content: [{ type: 'text', text: '{}' }], structuredContent: {} } as unknown as JsonObject
    expect(shapeResult('tools/call', result, '2025-03-26')).toEqual({ content: [{ type: 'text', text: '{}' }] })
    expect(shapeResult('tools/call', result, '2025-06-18')).toBe(result)
  })

  it('names only fields that came after 2024-11-05', () => {
    for (const since of Object.values(FIELDS_SINCE)) for (const version of Object.values(since)) expect(version > '2024-11-05').toBe(true)
  })
})

describe('a legacy session', () => {
  it('answers a 2024-11-05 client without the fields later revisions added', async () => {
    const server = createServer({ name: 'shaped', version: '1.0.0', title: 'Shaped', icons: icon } as never)
    server.tool('echo', { title: 'Echo', inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, icons: icon } as never,
      () => ({ content: [{ type: 'text', text: '{}' }], structuredContent: {} }))
    await using old = await connectInMemory(server, { protocolVersion: '2024-11-05' })
    expect(old.client.serverInfo).toEqual({ name: 'shaped', version: '1.0.0' })
    expect((await old.client.listTools()).tools).toEqual([{ name: 'echo', inputSchema: { type: 'object' } }])
    expect(await old.client.callTool('echo', {})).toEqual({ content: [{ type: 'text', text: '{}' }] })
    await using current = await connectInMemory(server)
    expect((await current.client.listTools()).tools[0]).toMatchObject({ title: 'Echo', icons: icon, outputSchema: { type: 'object' } })
  })
})
