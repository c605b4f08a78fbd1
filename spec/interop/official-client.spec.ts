import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema, McpError,
  ResourceUpdatedNotificationSchema, type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Collects every page of a list the official client fetches one page at a time. */
async function walk<T>(page: (cursor?: string) => Promise<{ nextCursor?: string } & Record<string, unknown>>, key: string): Promise<{ items: T[]; pages: number }> {
  const items: T[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const result = await page(cursor)
    items.push(...(result[key] as T[]))
    cursor = result.nextCursor
    pages++
  } while (cursor !== undefined && pages < 50)
  return { items, pages }
}

describe('the official SDK client against the rxmcp everything server', () => {
  let client: Client
  const logs: unknown[] = []
  const updates: string[] = []
  /** Every message the client's transport read from the server's stdout, in order, before the SDK dispatches it. */
  const wire: JSONRPCMessage[] = []

  beforeAll(async () => {
    client = new Client({ name: 'official-client', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } })
    client.setRequestHandler(CreateMessageRequestSchema, async request => ({
      role: 'assistant', model: 'official-model', content: { type: 'text', text: `echo of ${JSON.stringify(request.params.messages[0]?.content)}` },
    }))
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }))
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///official', name: 'official' }] }))
    client.setNotificationHandler(LoggingMessageNotificationSchema, notification => { logs.push(notification.params) })
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, notification => { updates.push(notification.params.uri) })
    const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'examples/everything/server.ts'], cwd: root, stderr: 'inherit' })
    await client.connect(transport)
    // The transport calls onmessage once per line read, in wire order, synchronously.
    const dispatch = transport.onmessage!
    transport.onmessage = (message: JSONRPCMessage) => { wire.push(message); dispatch(message) }
  }, 30_000)

  afterAll(async () => { await client?.close() })

  it('negotiates and reads the server info', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'rxmcp-everything', version: '0.1.0' })
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true }, prompts: {}, logging: {}, completions: {} })
  })

  it('walks every list across pages', async () => {
    const tools = await walk(cursor => client.listTools({ cursor }), 'tools')
    expect(tools.items).toHaveLength(10)
    expect(tools.pages).toBe(2)
    expect((await walk(cursor => client.listResources({ cursor }), 'resources')).items).toHaveLength(8)
    expect((await walk(cursor => client.listResourceTemplates({ cursor }), 'resourceTemplates')).items).toHaveLength(2)
    const prompts = await walk(cursor => client.listPrompts({ cursor }), 'prompts')
    expect(prompts.items).toHaveLength(7)
    expect(prompts.pages).toBe(2)
  })

  it('calls every kind of tool', async () => {
    expect(await client.callTool({ name: 'echo', arguments: { text: 'official' } })).toEqual({ content: [{ type: 'text', text: 'official' }] })
    expect(await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } })).toMatchObject({ structuredContent: { sum: 42 } })
    const blocks = (await client.callTool({ name: 'content_types' })).content as { type: string }[]
    expect(blocks.map(block => block.type)).toEqual(['text', 'image', 'audio', 'resource_link', 'resource'])
    expect(await client.callTool({ name: 'fail' })).toMatchObject({ isError: true })
    expect(await client.callTool({ name: 'echo', arguments: { text: 7 } })).toMatchObject({ isError: true })
  })

  it('receives progress: all of it is on the wire before the result', async () => {
    const progress: number[] = []
    wire.length = 0
    const result = await client.callTool({ name: 'long_running', arguments: { steps: 4, ms: 5 } }, undefined, { onprogress: p => { progress.push(p.progress) } })
    expect(result.content).toEqual([{ type: 'text', text: 'Finished 4 steps' }])
    // What rxmcp guarantees: every progress notification is written before the result.
    const answer = wire.findIndex(message => 'result' in message && JSON.stringify(message.result).includes('Finished 4 steps'))
    expect(answer).toBeGreaterThan(0)
    const id = (wire[answer] as { id: string | number }).id
    const before = wire.slice(0, answer).flatMap(message => 'method' in message && message.method === 'notifications/progress' && message.params?.progressToken === id ? [message.params.progress] : [])
    expect(before).toEqual([1, 2, 3, 4])
    expect(wire.slice(answer + 1).some(message => 'method' in message && message.method === 'notifications/progress')).toBe(false)
    // The SDK client dispatches notifications a turn late and may drop the ones that share a read
    // with the response (on a loaded machine): what it reports is some prefix, in order.
    expect(progress).toEqual([1, 2, 3, 4].slice(0, progress.length))
  })

  it('cancels through an AbortSignal and the server goes on', async () => {
    const controller = new AbortController()
    // Aborted once its first progress arrives: the call is surely in flight on the server then.
    const call = client.callTool({ name: 'long_running', arguments: { steps: 500, ms: 10 } }, undefined, { signal: controller.signal, onprogress: () => controller.abort('enough') })
    await expect(call).rejects.toThrow()
    expect(await client.callTool({ name: 'echo', arguments: { text: 'after cancel' } })).toEqual({ content: [{ type: 'text', text: 'after cancel' }] })
  })

  it('answers sampling, elicitation and roots requests from the server', async () => {
    expect((await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })).content).toEqual([{ type: 'text', text: 'official-model: echo of {"type":"text","text":"hi"}' }])
    // The official client sends only the name; the rxmcp server reads what the user answered.
    expect((await client.callTool({ name: 'elicit' })).structuredContent).toEqual({ action: 'accept', content: { name: 'Grace' } })
    expect((await client.callTool({ name: 'roots' })).content).toEqual([{ type: 'text', text: '[{"uri":"file:///official","name":"official"}]' }])
  })

  it('gets log messages at or above the level it set', async () => {
    await client.setLoggingLevel('warning')
    logs.length = 0
    await client.callTool({ name: 'log', arguments: { level: 'info', message: 'quiet' } })
    await client.callTool({ name: 'log', arguments: { level: 'critical', message: 'loud' } })
    await client.ping()
    expect(logs).toEqual([{ level: 'critical', logger: 'everything', data: 'loud' }])
  })

  it('subscribes and receives resource updates', async () => {
    await client.subscribeResource({ uri: 'everything://static/2' })
    await client.callTool({ name: 'touch', arguments: { uri: 'everything://static/2' } })
    await client.ping()
    expect(updates).toEqual(['everything://static/2'])
    await client.unsubscribeResource({ uri: 'everything://static/2' })
    await client.callTool({ name: 'touch', arguments: { uri: 'everything://static/2' } })
    await client.ping()
    expect(updates).toEqual(['everything://static/2'])
  })

  it('reads resources, gets prompts and completes', async () => {
    expect((await client.readResource({ uri: 'everything://readme' })).contents[0]).toMatchObject({ mimeType: 'text/markdown', text: expect.stringContaining('rxmcp everything') })
    expect((await client.readResource({ uri: 'everything://logo' })).contents[0]).toMatchObject({ blob: expect.any(String) })
    expect((await client.readResource({ uri: 'everything://items/3' })).contents[0]).toMatchObject({ text: '{"id":"3","name":"Item 3"}' })
    expect((await client.getPrompt({ name: 'greeting', arguments: { name: 'Ada' } })).messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }])
    const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'name', value: 'a' } })
    expect(completion.completion.values).toEqual(['Ada', 'Alan'])
  })

  it('gets -32602 for an unknown tool and -32002 for an unknown resource', async () => {
    const tool = await client.callTool({ name: 'no_such_tool' }).catch(e => e)
    expect(tool).toBeInstanceOf(McpError)
    expect(tool.code).toBe(-32602)
    const resource = await client.readResource({ uri: 'everything://nowhere' }).catch(e => e)
    expect(resource.code).toBe(-32002)
  })
})
