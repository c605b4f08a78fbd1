import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs'
import { connect, type McpClient } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { CancelledError, InvalidParamsError } from '../../lib/jsonrpc/errors.ts'

const fixture = fileURLToPath(new URL('./fixtures/official-server.ts', import.meta.url))

describe('the rxmcp client against an official SDK McpServer', () => {
  let client: McpClient

  beforeAll(async () => {
    client = await connect(stdioClient({ command: process.execPath, args: ['--import', 'tsx', fixture], stderr: 'inherit' }), { name: 'rxmcp-client', version: '1' }, {
      sampling: params => ({ role: 'assistant', model: 'rxmcp-model', content: { type: 'text', text: `asked ${params.maxTokens}` } }),
      elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) },
      roots: [{ uri: 'file:///rx', name: 'rx' }],
    })
  }, 30_000)

  afterAll(async () => { await client?.close() })

  it('negotiates the latest version and reads the server info', () => {
    expect(client.serverInfo).toMatchObject({ name: 'official-server', version: '9.9.9' })
    expect(client.protocolVersion).toBe('2025-11-25')
    expect(client.serverCapabilities).toMatchObject({ tools: {}, resources: { subscribe: true }, prompts: {}, logging: {} })
  })

  it('lists everything (the official McpServer sends one page)', async () => {
    const tools = await lastValueFrom(client.tools().pipe(toArray()))
    expect(tools.map(tool => tool.name).sort()).toEqual(['add', 'ask', 'echo', 'fail', 'log', 'slow', 'touch'])
    expect((await lastValueFrom(client.resources().pipe(toArray()))).map(resource => resource.uri).sort()).toEqual(['official://blob', 'official://readme'])
    expect(await lastValueFrom(client.resourceTemplates().pipe(toArray()))).toMatchObject([{ uriTemplate: 'official://items/{id}' }])
    expect((await lastValueFrom(client.prompts().pipe(toArray()))).map(prompt => prompt.name)).toEqual(['greet'])
  })

  it('calls tools, with structured content checked against the listed outputSchema', async () => {
    expect(await client.callTool('echo', { text: 'across SDKs' })).toEqual({ content: [{ type: 'text', text: 'across SDKs' }] })
    expect((await client.callTool('add', { a: 1, b: 2 })).structuredContent).toEqual({ sum: 3 })
    expect(await client.callTool('fail')).toMatchObject({ isError: true })
    // The official McpServer answers an unknown tool with an isError result rather than -32602.
    expect(await client.callTool('missing')).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('missing') }] })
  })

  it('receives progress and cancels through a signal', async () => {
    const progress: number[] = []
    expect(await client.callTool('slow', { steps: 3, ms: 5 }, { onProgress: event => progress.push(event.progress) })).toEqual({ content: [{ type: 'text', text: 'done 3' }] })
    expect(progress).toEqual([1, 2, 3])
    const controller = new AbortController()
    // Aborted once its first progress arrives: the call is surely in flight on the server then.
    const call = client.callTool('slow', { steps: 200, ms: 10 }, { signal: controller.signal, onProgress: () => controller.abort() })
    await expect(call).rejects.toBeInstanceOf(CancelledError)
    expect(await client.callTool('echo', { text: 'alive' })).toEqual({ content: [{ type: 'text', text: 'alive' }] })
  })

  it('answers the server sampling, elicitation (with defaults) and roots requests', async () => {
    const result = await client.callTool('ask')
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({
      sampled: { type: 'text', text: 'asked 20' },
      form: { action: 'accept', content: { name: 'Ada', units: 'metric' } },
      roots: [{ uri: 'file:///rx', name: 'rx' }],
    })
  })

  it('receives log messages filtered by the level it set', async () => {
    await client.setLoggingLevel('warning')
    const messages = firstValueFrom(client.notifications('notifications/message').pipe(take(1), toArray()))
    await client.callTool('log', { level: 'info', message: 'quiet' })
    await client.callTool('log', { level: 'error', message: 'loud' })
    expect(await messages).toEqual([{ level: 'error', logger: 'official', data: 'loud' }])
  })

  it('subscribes and receives resource updates', async () => {
    await client.subscribeResource('official://readme')
    const updated = firstValueFrom(client.notifications('notifications/resources/updated'))
    await client.callTool('touch', { uri: 'official://readme' })
    expect(await updated).toEqual({ uri: 'official://readme' })
    await client.unsubscribeResource('official://readme')
  })

  it('reads resources and templates, gets prompts, and completes', async () => {
    expect((await client.readResource('official://readme')).contents).toEqual([{ uri: 'official://readme', mimeType: 'text/plain', text: 'Official readme' }])
    expect((await client.readResource('official://blob')).contents[0]).toMatchObject({ blob: 'AAEC' })
    expect((await client.readResource('official://items/7')).contents[0]).toMatchObject({ text: 'item 7' })
    expect((await client.getPrompt('greet', { name: 'Grace' })).messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello Grace' } }])
    expect((await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } })).completion.values).toEqual(['Ada', 'Alan'])
    expect((await client.complete({ ref: { type: 'ref/resource', uri: 'official://items/{id}' }, argument: { name: 'id', value: '1' } })).completion.values).toEqual(['1', '10', '11'])
    await expect(client.getPrompt('greet', { nam: 'x' } as never)).rejects.toBeInstanceOf(InvalidParamsError)
  })
})
