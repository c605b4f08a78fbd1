import { describe, expect, it } from 'vitest'
import { FIELDS_SINCE, shapeForRevision, shapeResult } from '../../../lib/schema/shape.ts'
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

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const
/** The keys of an object, sorted, for comparing shapes. */
const keys = (value: unknown) => Object.keys(value as object).sort()

describe('shapeForRevision', () => {
  const samplingParams = {
    messages: [{ role: 'user', content: { type: 'text', text: 'hi' }, _meta: { m: 1 } }], maxTokens: 9,
    tools: [{ name: 't', inputSchema: { type: 'object' } }], toolChoice: { mode: 'auto' }, task: { ttl: 1 }, _meta: { progressToken: 1 },
  } as unknown as JsonObject

  it.each([
    ['2024-11-05', ['_meta', 'maxTokens', 'messages'], ['content', 'role']],
    ['2025-03-26', ['_meta', 'maxTokens', 'messages'], ['content', 'role']],
    ['2025-06-18', ['_meta', 'maxTokens', 'messages'], ['content', 'role']],
    ['2025-11-25', ['_meta', 'maxTokens', 'messages', 'task', 'toolChoice', 'tools'], ['_meta', 'content', 'role']],
  ])('asks a %s client for sampling with only the fields its revision defines', (version, fields, messageFields) => {
    const shaped = shapeForRevision('request', 'sampling/createMessage', samplingParams, version) as { messages: JsonObject[] }
    expect(keys(shaped)).toEqual(fields)
    expect(keys(shaped.messages[0])).toEqual(messageFields)
  })

  const elicitParams = {
    mode: 'form', message: 'name?', task: { ttl: 1 },
    requestedSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { n: { type: 'string' } } },
  } as unknown as JsonObject

  it.each([
    ['2025-06-18', ['message', 'requestedSchema'], ['properties', 'type']],
    ['2025-11-25', ['message', 'mode', 'requestedSchema', 'task'], ['$schema', 'properties', 'type']],
  ])('asks a %s client to elicit with only the fields its revision defines', (version, fields, schemaFields) => {
    const shaped = shapeForRevision('request', 'elicitation/create', elicitParams, version) as { requestedSchema: JsonObject }
    expect(keys(shaped)).toEqual(fields)
    expect(keys(shaped.requestedSchema)).toEqual(schemaFields)
  })

  it.each(REVISIONS.map(version => [version] as const))('sends a %s server only the request fields its revision defines', version => {
    const call = shapeForRevision('request', 'tools/call', { name: 'a', arguments: {}, task: { ttl: 5 } } as unknown as JsonObject, version)
    expect('task' in call).toBe(version >= '2025-11-25')
    const complete = shapeForRevision('request', 'completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' }, context: { arguments: {} } } as unknown as JsonObject, version)
    expect('context' in complete).toBe(version >= '2025-06-18')
    const init = shapeForRevision('request', 'initialize', {
      protocolVersion: version, clientInfo: { name: 'c', version: '1', title: 'C', icons: icon }, capabilities: { roots: {}, sampling: {}, elicitation: {}, tasks: {} },
    } as unknown as JsonObject, version) as { clientInfo: JsonObject; capabilities: JsonObject }
    expect('title' in init.clientInfo).toBe(version >= '2025-06-18')
    expect('icons' in init.clientInfo).toBe(version >= '2025-11-25')
    expect(keys(init.capabilities)).toEqual(['roots', 'sampling', ...(version >= '2025-06-18' ? ['elicitation'] : []), ...(version >= '2025-11-25' ? ['tasks'] : [])].sort())
  })

  it.each(REVISIONS.map(version => [version] as const))('answers a %s server with only the result fields its revision defines', version => {
    const roots = shapeForRevision('result', 'roots/list', { roots: [{ uri: 'file:///a', name: 'a', _meta: { k: 1 } }] } as unknown as JsonObject, version) as { roots: JsonObject[] }
    expect('_meta' in roots.roots[0]!).toBe(version >= '2025-06-18')
    const read = shapeForRevision('result', 'resources/read', { contents: [{ uri: 'a://b', text: 'x', _meta: {} }] } as unknown as JsonObject, version) as { contents: JsonObject[] }
    expect('_meta' in read.contents[0]!).toBe(version >= '2025-06-18')
  })

  it.each(REVISIONS.map(version => [version] as const))('sends a %s peer progress with only the fields its revision defines', version => {
    const progress = shapeForRevision('notification', 'notifications/progress', { progressToken: 1, progress: 1, total: 2, message: 'half' } as unknown as JsonObject, version)
    expect(keys(progress)).toEqual(version >= '2025-03-26' ? ['message', 'progress', 'progressToken', 'total'] : ['progress', 'progressToken', 'total'])
  })

  it.each([['2025-11-25'], ['2026-07-28']])('returns the very payload at %s without looking at it', version => {
    const payload = { get tools(): never { throw new Error('looked at') } } as unknown as JsonObject
    for (const kind of ['request', 'result', 'notification'] as const) expect(shapeForRevision(kind, 'tools/list', payload, version)).toBe(payload)
  })

  it('leaves methods and fields outside the table alone, and the original untouched when it copies', () => {
    const other = { anything: { icons: icon }, task: 1 } as unknown as JsonObject
    expect(shapeForRevision('request', 'resources/read', other, '2024-11-05')).toBe(other)
    const before = JSON.stringify(samplingParams)
    shapeForRevision('request', 'sampling/createMessage', samplingParams, '2024-11-05')
    expect(JSON.stringify(samplingParams)).toBe(before)
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

describe('a client', () => {
  it('sends a server the capabilities its negotiated revision defines', async () => {
    const server = createServer({ name: 'caps', version: '1.0.0' })
    const seen: unknown[] = []
    server.tool('caps', {}, (_args, ctx) => { seen.push(ctx.clientCapabilities); return { content: [] } })
    await using old = await connectInMemory(server, { protocolVersion: '2025-06-18', capabilities: { tasks: {}, experimental: { x: {} } } as never })
    await old.client.callTool('caps', {})
    await using current = await connectInMemory(server, { capabilities: { tasks: {}, experimental: { x: {} } } as never })
    await current.client.callTool('caps', {})
    expect(seen[0]).not.toHaveProperty('tasks')
    expect(seen[0]).toMatchObject({ experimental: { x: {} } })
    expect(seen[1]).toMatchObject({ tasks: {}, experimental: { x: {} } })
  })
})
