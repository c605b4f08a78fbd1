import { describe, expect, it } from 'vitest'
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { connectInMemory } from '../../testing.ts'
import { CancelledError } from '../../lib/jsonrpc/errors.ts'

const handlers = {
  sampling: () => ({ role: 'assistant' as const, model: 'test-model', content: { type: 'text' as const, text: 'forty-two' } }),
  elicitation: { form: () => ({ action: 'accept' as const, content: { name: 'Ada' } }) },
  roots: [{ uri: 'file:///project', name: 'project' }],
  serialize: true,
}

describe('createEverythingServer', () => {
  it('lists everything across pages of five', async () => {
    await using pair = await connectInMemory(createEverythingServer(), handlers)
    expect((await pair.client.listTools()).tools).toHaveLength(5)
    expect(await lastValueFrom(pair.client.tools().pipe(toArray()))).toHaveLength(10)
    expect(await lastValueFrom(pair.client.resources().pipe(toArray()))).toHaveLength(8)
    expect(await lastValueFrom(pair.client.resourceTemplates().pipe(toArray()))).toHaveLength(2)
    expect(await lastValueFrom(pair.client.prompts().pipe(toArray()))).toHaveLength(7)
  })

  it('answers echo with exactly one text block', async () => {
    await using pair = await connectInMemory(createEverythingServer(), handlers)
    expect(await pair.client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] })
  })

  it('adds with structured content, returns every content type, and fails as isError', async () => {
    await using pair = await connectInMemory(createEverythingServer(), handlers)
    await pair.client.listTools()
    expect(await pair.client.callTool('add', { a: 1, b: 2 })).toEqual({ content: [{ type: 'text', text: '3' }], structuredContent: { sum: 3 } })
    const types = (await pair.client.callTool('content_types')).content.map(block => block.type)
    expect(types).toEqual(['text', 'image', 'audio', 'resource_link', 'resource'])
    expect(await pair.client.callTool('fail')).toEqual({ content: [{ type: 'text', text: 'This tool always fails' }], isError: true })
  })

  it('reports progress from long_running and stops it on cancel', async () => {
    await using pair = await connectInMemory(createEverythingServer(), handlers)
    const progress: number[] = []
    await pair.client.callTool('long_running', { steps: 3, ms: 1 }, { onProgress: event => progress.push(event.progress) })
    expect(progress).toEqual([1, 2, 3])
    const controller = new AbortController()
    // Aborted at its first progress: the handler runs, the request is in flight on the server.
    const call = pair.client.callTool('long_running', { steps: 1000, ms: 5 }, { signal: controller.signal, onProgress: () => controller.abort() }).catch(e => e)
    expect(await call).toBeInstanceOf(CancelledError)
    // The server forgets the request once the cancellation has reached it: a ping sent after it is
    // answered after it was read (one session reads in order).
    await pair.client.ping()
    expect(pair.session.connection.incoming.size).toBe(0)
  })

  it('asks the client for sampling, elicitation and roots', async () => {
    await using pair = await connectInMemory(createEverythingServer(), handlers)
    expect((await pair.client.callTool('sample', { prompt: 'meaning?' })).content).toEqual([{ type: 'text', text: 'test-model: forty-two' }])
    expect((await pair.client.callTool('elicit')).structuredContent).toEqual({ action: 'accept', content: { name: 'Ada', age: 30, color: 'green', extras: ['tea'] } })
    expect((await pair.client.callTool('roots')).content).toEqual([{ type: 'text', text: JSON.stringify(handlers.roots) }])
  })

  it('reads resources and templates, completes, and gets prompts', async () => {
    await using pair = await connectInMemory(createEverythingServer(), handlers)
    expect((await pair.client.readResource('everything://logo')).contents[0]).toMatchObject({ mimeType: 'image/png', blob: expect.any(String) })
    expect((await pair.client.readResource('everything://items/7')).contents[0]).toMatchObject({ text: '{"id":"7","name":"Item 7"}' })
    expect((await pair.client.readResource('everything://files/a/b.txt')).contents[0]).toMatchObject({ text: 'Contents of a/b.txt' })
    const ids = await pair.client.complete({ ref: { type: 'ref/resource', uri: 'everything://items/{id}' }, argument: { name: 'id', value: '1' } })
    expect(ids.completion).toMatchObject({ total: 32, hasMore: false })
    expect((await pair.client.getPrompt('greeting', { name: 'Grace' })).messages[0]!.content).toEqual({ type: 'text', text: 'Say hello to Grace' })
    expect((await pair.client.getPrompt('resources')).messages.map(message => message.content.type)).toEqual(['resource', 'image', 'text'])
  })

  it('notifies subscribers when touch marks a resource updated, and logs at the level set', async () => {
    await using pair = await connectInMemory(createEverythingServer(), handlers)
    await pair.client.subscribeResource('everything://readme')
    const updated = firstValueFrom(pair.client.notifications('notifications/resources/updated'))
    await pair.client.callTool('touch', { uri: 'everything://readme' })
    expect(await updated).toEqual({ uri: 'everything://readme' })
    await pair.client.setLoggingLevel('warning')
    const logs = lastValueFrom(pair.client.notifications('notifications/message').pipe(take(1), toArray()))
    await pair.client.callTool('log', { level: 'info', message: 'quiet' })
    await pair.client.callTool('log', { level: 'error', message: 'loud' })
    expect(await logs).toEqual([{ level: 'error', logger: 'everything', data: 'loud' }])
  })
})
