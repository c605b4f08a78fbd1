import { describe, expect, it } from 'vitest'
import { BehaviorSubject, filter, firstValueFrom } from 'rxjs'
import { createServer, proxy, proxyClientOptions, type ListedOffer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { connectInMemory, createMemoryPair } from '../../testing.ts'

describe('proxy(client, { listed })', () => {
  it('takes tools, resources and prompts from the given lists and lists only the templates itself', async () => {
    const source = createServer({ name: 'source', version: '1.0.0' })
    source.tool('echo', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'echoed' }] }))
    source.resource('mem://a', { name: 'a' }, () => 'a')
    source.resourceTemplate('mem://items/{id}', { name: 'item' }, (_uri, { id }) => `item ${String(id)}`)
    source.prompt('greet', {}, () => ({ messages: [] }))
    const asked: string[] = []
    source.use(next => (request, ctx) => { asked.push(request.method); return next(request, ctx) })
    const [clientSide, serverSide] = createMemoryPair()
    await source.listen(serverSide)
    const client = await connect(clientSide, { name: 'proxy', version: '1' }, { era: 'legacy', ...proxyClientOptions() })
    // What a host keeps of the source (its own listing).
    const tools = (await client.listTools()).tools
    const resources = (await client.listResources()).resources
    const prompts = (await client.listPrompts()).prompts
    asked.length = 0
    const listed = new BehaviorSubject<ListedOffer>({ tools, resources, prompts })
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const templatesWritten = firstValueFrom(parent.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'resources')))
    parent.mount('s', proxy(client, { listed, closeClient: true }))
    await templatesWritten
    await using pair = await connectInMemory(parent)
    expect((await pair.client.listTools()).tools.map(tool => tool.name)).toEqual(['s__echo'])
    expect((await pair.client.listResources()).resources.map(resource => resource.uri)).toEqual(['mem://a'])
    expect((await pair.client.listPrompts()).prompts.map(prompt => prompt.name)).toEqual(['s__greet'])
    await pair.client.ping()
    expect((await pair.client.listResourceTemplates()).resourceTemplates.map(template => template.uriTemplate)).toEqual(['mem://items/{id}'])
    // The lists come from the keeper; the source was asked for its templates only.
    expect(asked.filter(method => method.endsWith('/list'))).toEqual(['resources/templates/list'])
    // A change of the kept lists reaches the mounting server's clients.
    const changed = firstValueFrom(parent.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'tools')))
    listed.next({ tools: [], resources, prompts })
    await changed
    expect((await pair.client.listTools()).tools).toEqual([])
    expect(asked.filter(method => method.endsWith('/list'))).toEqual(['resources/templates/list'])
  })
})
