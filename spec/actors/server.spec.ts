import { describe, expect, it } from 'vitest'
import { filter, firstValueFrom, lastValueFrom, take, toArray, interval, map, tap, last } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import type { ActorInspectionEvent } from '../../actors/actor.ts'
import { connect } from '../../actors/client.ts'
import { connectInMemory } from '../../testing.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { createConnection } from '../../lib/connection.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import {
  CapabilityError, InternalError, InvalidParamsError, MethodNotFoundError, ResourceNotFoundError, UnsupportedVersionError,
} from '../../lib/jsonrpc/errors.ts'
import { verifies } from '../helpers/verifies.ts'

function weatherServer(options: Parameters<typeof createServer>[1] = {}): McpServer {
  const server = createServer({ name: 'weather', version: '1.0.0' }, { reportUnhandledError: () => {}, ...options })
  server.tool('echo', { description: 'Echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
  server.tool('forecast', {
    title: 'Forecast',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    outputSchema: { type: 'object', properties: { temperature: { type: 'number' } }, required: ['temperature'] },
    annotations: { readOnlyHint: true },
  }, ({ city }) => city === 'Nowhere'
    ? { content: [], structuredContent: { temperature: 'warm' } }
    : { content: [{ type: 'text', text: '21' }], structuredContent: { temperature: 21 } })
  server.tool('crash', {}, () => { throw new Error('sensor offline') })
  server.tool('defs', {
    inputSchema: { type: 'object', $defs: { unit: { enum: ['C', 'F'] } }, properties: { unit: { $ref: '#/$defs/unit' } }, required: ['unit'] },
  }, ({ unit }) => ({ content: [{ type: 'text', text: String(unit) }] }))
  server.tool('draft7', {
    inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { n: { type: 'integer' } }, properties: { n: { $ref: '#/definitions/n' } }, required: ['n'] },
  }, ({ n }) => ({ content: [{ type: 'text', text: String(n) }] }))
  server.tool('count', { inputSchema: { type: 'object', properties: { steps: { type: 'integer' } } } }, ({ steps }, ctx) =>
    interval(5).pipe(take(Number(steps ?? 3)), tap(i => ctx.progress(i + 1, Number(steps ?? 3))), last(), map(() => ({ content: [{ type: 'text', text: 'counted' }] }))))
  server.resource('weather://readme', { name: 'readme', mimeType: 'text/plain' }, () => 'Sunny')
  server.resource('weather://icon', { name: 'icon', mimeType: 'image/png' }, uri => ({ uri, mimeType: 'image/png', blob: 'iVBORw0KGgo=' }))
  server.resourceTemplate('weather://cities/{city}', {
    name: 'city', mimeType: 'application/json',
    complete: { city: value => ['Berlin', 'Bern', 'Boston'].filter(city => city.startsWith(value)) },
  }, (uri, { city }) => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ city }) }] }))
  server.prompt('report', {
    description: 'Weather report',
    arguments: [{ name: 'city', required: true }, { name: 'style' }],
    complete: { style: () => Array.from({ length: 150 }, (_, i) => `style-${i}`) },
  }, ({ city, style }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Report for ${city} ${style ?? ''}`.trim() } }] }))
  return server
}

describe('createServer', () => {
  it('lists tools with their metadata and calls them', async () => {
    await using pair = await connectInMemory(weatherServer())
    const tools = await lastValueFrom(pair.client.tools().pipe(toArray()))
    expect(tools.map(tool => tool.name)).toEqual(['echo', 'forecast', 'crash', 'defs', 'draft7', 'count'])
    expect(tools[1]).toMatchObject({ title: 'Forecast', annotations: { readOnlyHint: true }, outputSchema: { type: 'object' } })
    expect(await pair.client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] })
  })

  verifies('tools:input-validation', 'reports invalid arguments as a tool result with isError', async () => {
    await using pair = await connectInMemory(weatherServer())
    const result = await pair.client.callTool('echo', { text: 5 })
    expect(result.isError).toBe(true)
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('/text') })
    expect((await pair.client.callTool('defs', { unit: 'K' })).isError).toBe(true)
    expect(await pair.client.callTool('defs', { unit: 'C' })).toEqual({ content: [{ type: 'text', text: 'C' }] })
    expect((await pair.client.callTool('draft7', { n: 1.5 })).isError).toBe(true)
    expect(await pair.client.callTool('draft7', { n: 2 })).toEqual({ content: [{ type: 'text', text: '2' }] })
  })

  it('turns a throwing tool into an isError result and keeps the session', async () => {
    await using pair = await connectInMemory(weatherServer())
    expect(await pair.client.callTool('crash')).toEqual({ content: [{ type: 'text', text: 'sensor offline' }], isError: true })
    expect(await pair.client.callTool('echo', { text: 'still here' })).toMatchObject({ content: [{ text: 'still here' }] })
  })

  verifies('tools:unknown-tool', 'answers an unknown tool with -32602', async () => {
    await using pair = await connectInMemory(weatherServer())
    const error = await pair.client.callTool('nope').catch(e => e)
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error.code).toBe(-32602)
  })

  verifies('tools:output-schema', 'checks structuredContent against the outputSchema', async () => {
    await using pair = await connectInMemory(weatherServer())
    expect(await pair.client.callTool('forecast', { city: 'Oslo' })).toEqual({ content: [{ type: 'text', text: '21' }], structuredContent: { temperature: 21 } })
    const error = await pair.client.callTool('forecast', { city: 'Nowhere' }).catch(e => e)
    expect(error).toBeInstanceOf(InternalError)
    expect(error.message).toContain('outputSchema')
  })

  verifies('tools:list-changed', 'sends one list_changed when tools change, and hides disabled tools', async () => {
    const server = weatherServer()
    await using pair = await connectInMemory(server)
    const changes = firstValueFrom(pair.client.notifications('notifications/tools/list_changed').pipe(take(1)))
    const extra = server.tool('extra', {}, () => ({ content: [] }))
    extra.disable()
    await changes
    expect((await pair.client.listTools()).tools.map(tool => tool.name)).not.toContain('extra')
    extra.enable()
    expect((await pair.client.listTools()).tools.map(tool => tool.name)).toContain('extra')
    extra.remove()
    expect((await pair.client.listTools()).tools.map(tool => tool.name)).not.toContain('extra')
  })

  it('paginates every list with opaque cursors', async () => {
    await using pair = await connectInMemory(weatherServer({ pageSize: 2 }))
    const first = await pair.client.listTools()
    expect(first.tools).toHaveLength(2)
    expect(typeof first.nextCursor).toBe('string')
    expect(await lastValueFrom(pair.client.tools().pipe(toArray()))).toHaveLength(6)
    expect(await lastValueFrom(pair.client.resources().pipe(toArray()))).toHaveLength(2)
    const prompts = await pair.client.listPrompts()
    expect(prompts.nextCursor).toBeUndefined()
  })

  verifies('pagination:bad-cursor', 'answers a foreign or forged cursor with -32602', async () => {
    await using pair = await connectInMemory(weatherServer({ pageSize: 2 }))
    const toolsCursor = (await pair.client.listTools()).nextCursor!
    await expect(pair.client.listPrompts(toolsCursor)).rejects.toBeInstanceOf(InvalidParamsError)
    await expect(pair.client.listTools('Zm9vOjE')).rejects.toMatchObject({ code: -32602 })
  })

  it('reads text, blob and template resources', async () => {
    await using pair = await connectInMemory(weatherServer())
    expect(await pair.client.readResource('weather://readme')).toEqual({ contents: [{ uri: 'weather://readme', mimeType: 'text/plain', text: 'Sunny' }] })
    expect(await pair.client.readResource('weather://icon')).toEqual({ contents: [{ uri: 'weather://icon', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }] })
    expect(await pair.client.readResource('weather://cities/Paris')).toEqual({ contents: [{ uri: 'weather://cities/Paris', mimeType: 'application/json', text: '{"city":"Paris"}' }] })
    expect(await lastValueFrom(pair.client.resourceTemplates().pipe(toArray()))).toEqual([{ uriTemplate: 'weather://cities/{city}', name: 'city', mimeType: 'application/json' }])
  })

  verifies('resources:not-found', 'answers an unknown resource with -32002', async () => {
    await using pair = await connectInMemory(weatherServer())
    const error = await pair.client.readResource('weather://nowhere').catch(e => e)
    expect(error).toBeInstanceOf(ResourceNotFoundError)
    expect(error.code).toBe(-32002)
  })

  verifies('resources:subscribe', 'notifies subscribers of updates until they unsubscribe, through one actor per subscription', async () => {
    const server = weatherServer()
    await using pair = await connectInMemory(server)
    await pair.client.subscribeResource('weather://readme')
    expect([...pair.session.state.subscriptions.keys()]).toEqual(['weather://readme'])
    const updates = firstValueFrom(pair.client.notifications('notifications/resources/updated'))
    server.notifyResourceUpdated('weather://readme')
    server.notifyResourceUpdated('weather://icon')
    expect(await updates).toEqual({ uri: 'weather://readme' })
    const seen: ActorInspectionEvent[] = []
    const watching = server.system.inspect.subscribe(event => seen.push(event))
    await pair.client.unsubscribeResource('weather://readme')
    watching.unsubscribe()
    expect(pair.session.state.subscriptions.size).toBe(0)
    const subscription = `${server.system.name}/${pair.session.id}/subscription:weather://readme`
    expect(seen.filter(event => event.type === 'rxmcp.actor.ended' && event.actor === subscription)).toEqual([{ type: 'rxmcp.actor.ended', actor: subscription, status: 'stopped' }])
    await expect(pair.client.subscribeResource('weather://nowhere')).rejects.toBeInstanceOf(ResourceNotFoundError)
  })

  it('stops subscription actors when the session ends', async () => {
    const server = weatherServer()
    const pair = await connectInMemory(server)
    await pair.client.subscribeResource('weather://readme')
    const ended: string[] = []
    server.system.inspect.subscribe(event => { if (event.type === 'rxmcp.actor.ended') ended.push(`${event.actor} ${event.status}`) })
    await pair[Symbol.asyncDispose]()
    const session = `${server.system.name}/${pair.session.id}`
    expect(ended).toEqual([`${session}/subscription:weather://readme stopped`, `${session} stopped`])
    expect(server.sessions.size).toBe(0)
  })

  verifies('prompts:required-arguments', 'checks prompt arguments', async () => {
    await using pair = await connectInMemory(weatherServer())
    expect(await pair.client.getPrompt('report', { city: 'Rome' })).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'Report for Rome' } }] })
    await expect(pair.client.getPrompt('report', {})).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('city') })
    await expect(pair.client.getPrompt('nope')).rejects.toMatchObject({ code: -32602 })
  })

  verifies('completion:max-100', 'completes prompt arguments and template variables, at most 100 values', async () => {
    await using pair = await connectInMemory(weatherServer())
    expect(await pair.client.complete({ ref: { type: 'ref/resource', uri: 'weather://cities/{city}' }, argument: { name: 'city', value: 'Be' } }))
      .toEqual({ completion: { values: ['Berlin', 'Bern'], total: 2, hasMore: false } })
    const styles = await pair.client.complete({ ref: { type: 'ref/prompt', name: 'report' }, argument: { name: 'style', value: '' }, context: { arguments: { city: 'Rome' } } })
    expect(styles.completion.values).toHaveLength(100)
    expect(styles.completion).toMatchObject({ total: 150, hasMore: true })
    expect(await pair.client.complete({ ref: { type: 'ref/prompt', name: 'report' }, argument: { name: 'unknown', value: '' } }))
      .toEqual({ completion: { values: [], hasMore: false } })
  })

  verifies('logging:level-filter', 'sends log messages at or above the level the client set', async () => {
    const server = weatherServer()
    await using pair = await connectInMemory(server)
    const messages = lastValueFrom(pair.client.notifications('notifications/message').pipe(take(2), toArray()))
    await pair.client.setLoggingLevel('warning')
    server.log('info', 'hidden')
    server.log('error', { code: 1 }, 'sensors')
    pair.session.log('debug', 'hidden too')
    pair.session.log('emergency', 'shown')
    expect(await messages).toEqual([{ level: 'error', logger: 'sensors', data: { code: 1 } }, { level: 'emergency', data: 'shown' }])
    await expect(pair.client.setLoggingLevel('loud' as never)).rejects.toMatchObject({ code: -32602 })
  })

  it('reports progress from an Observable handler and cancels it when the caller aborts', async () => {
    const server = weatherServer()
    await using pair = await connectInMemory(server)
    const progress: number[] = []
    const result = await pair.client.callTool('count', { steps: 3 }, { onProgress: event => progress.push(event.progress) })
    expect(result).toEqual({ content: [{ type: 'text', text: 'counted' }] })
    expect(progress).toEqual([1, 2, 3])
    const controller = new AbortController()
    // Its first progress says the handler runs: the request is in flight on the server.
    let isRunning!: () => void
    const running = new Promise<void>(resolve => { isRunning = resolve })
    const call = pair.client.callTool('count', { steps: 1000 }, { signal: controller.signal, onProgress: () => isRunning() }).catch(e => e)
    await running
    expect(pair.session.connection.incoming.size).toBe(1)
    // The request's actor ends once the cancellation has reached the server: that is the event.
    const request = [...pair.session.connection.incoming.values()][0]!.actor!.path
    const ended = firstValueFrom(server.system.inspect.pipe(filter(event => event.type === 'rxmcp.actor.ended' && event.actor === request)))
    controller.abort()
    expect((await call).code).toBe('RXMCP_ERR_CANCELLED')
    await ended
    // The server forgets the request once the cancellation has reached it.
    expect(pair.session.connection.incoming.size).toBe(0)
  })

  verifies('lifecycle:capabilities', 'enforces capabilities both ways', async () => {
    const server = createServer({ name: 'bare', version: '1' })
    server.tool('ask', {}, async (_args, ctx) => {
      const answer = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 })
      return { content: [answer.content as never] }
    })
    await using pair = await connectInMemory(server)
    // The server offers no prompts: the client refuses locally, and the server would answer -32601.
    await expect(pair.client.listPrompts()).rejects.toBeInstanceOf(CapabilityError)
    const raw = await lastValueFrom(pair.session.connection.request('ping'))
    expect(raw).toEqual({ type: 'result', result: {} })
    // The client declared no sampling: the server refuses locally, and the tool reports it.
    const result = await pair.client.callTool('ask')
    expect(result.isError).toBe(true)
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining('sampling') })
  })

  it('answers -32601 for a method whose capability the server does not offer', async () => {
    const server = createServer({ name: 'bare', version: '1' })
    const [a, b] = createMemoryPair()
    await server.listen(b)
    const raw = createConnection(a)
    raw.start()
    await lastValueFrom(raw.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }, { progress: false }))
    await raw.notify('notifications/initialized')
    await expect(lastValueFrom(raw.request('prompts/list'))).rejects.toBeInstanceOf(MethodNotFoundError)
    await raw.close()
  })

  it('sends sampling, elicitation and roots requests to the client handlers', async () => {
    const server = createServer({ name: 'asker', version: '1' })
    server.tool('ask', {}, async (_args, ctx) => {
      const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'weather?' } }], maxTokens: 10 })
      const form = await ctx.elicit({ message: 'Who?', requestedSchema: { type: 'object', properties: { name: { type: 'string' }, units: { type: 'string', default: 'metric' } } } })
      const roots = await ctx.listRoots()
      return { content: [{ type: 'text', text: JSON.stringify({ sampled: sampled.content, form, roots: roots.roots }) }] }
    })
    await using pair = await connectInMemory(server, {
      sampling: params => ({ role: 'assistant', model: 'test', content: { type: 'text', text: `sunny (${params.maxTokens})` } }),
      elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) },
      roots: [{ uri: 'file:///home', name: 'home' }],
    })
    const result = await pair.client.callTool('ask')
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({
      sampled: { type: 'text', text: 'sunny (10)' },
      form: { action: 'accept', content: { name: 'Ada', units: 'metric' } },
      roots: [{ uri: 'file:///home', name: 'home' }],
    })
  })

  it('tells the server when roots change', async () => {
    const server = weatherServer()
    await using pair = await connectInMemory(server, { roots: [] })
    const changed = firstValueFrom(pair.session.notifications('notifications/roots/list_changed'))
    pair.client.setRoots([{ uri: 'file:///work' }])
    await changed
    expect(await pair.session.listRoots()).toEqual({ roots: [{ uri: 'file:///work' }] })
  })

  verifies('lifecycle:version-negotiation', 'answers the client version when supported, else its latest', async () => {
    for (const [asked, answered] of [['2025-03-26', '2025-03-26'], ['2024-11-05', '2024-11-05'], ['1999-01-01', '2025-11-25']]) {
      const server = weatherServer()
      const [a, b] = createMemoryPair()
      await server.listen(b)
      const raw = createConnection(a)
      raw.start()
      const result = await lastValueFrom(raw.request('initialize', { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'raw', version: '1' } }, { progress: false }).pipe(resultOf()))
      expect(result.protocolVersion).toBe(answered)
      await raw.close()
    }
  })

  verifies('lifecycle:client-rejects-version', 'closes with UnsupportedVersionError when the server picks a version the client lacks', async () => {
    const server = weatherServer({ protocolVersions: ['2024-11-05'] })
    const [a, b] = createMemoryPair()
    const session = await server.listen(b)
    const error = await connect(a, { name: 'picky', version: '1' }, { protocolVersions: ['2025-11-25'] }).catch(e => e)
    expect(error).toBeInstanceOf(UnsupportedVersionError)
    expect(error.message).toContain('2024-11-05')
    await session.closed
  })

  it('exposes the negotiated session to both sides', async () => {
    await using pair = await connectInMemory(weatherServer({ instructions: 'Ask about weather' }), { roots: [] })
    expect(pair.client.serverInfo).toEqual({ name: 'weather', version: '1.0.0' })
    expect(pair.client.instructions).toBe('Ask about weather')
    expect(pair.client.protocolVersion).toBe('2025-11-25')
    expect(pair.client.serverCapabilities).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true }, prompts: {}, completions: {}, logging: {} })
    expect(pair.session.state).toMatchObject({ status: 'operating', clientInfo: { name: 'rxmcp-test' }, clientCapabilities: { roots: { listChanged: true } } })
  })

  it('runs URL elicitation and tells the client when it completes', async () => {
    const server = createServer({ name: 'url', version: '1' })
    server.tool('login', {}, async (_args, ctx) => {
      const answer = await ctx.elicit({ mode: 'url', message: 'Sign in', elicitationId: 'e-1', url: 'https://example.com/login' })
      ctx.session!.completeElicitation('e-1')
      return { content: [{ type: 'text', text: answer.action }] }
    })
    await using pair = await connectInMemory(server, { elicitation: { url: params => ({ action: params.mode === 'url' ? 'accept' : 'decline' }) } })
    expect(pair.client.state.status).toBe('operating')
    const completed = firstValueFrom(pair.client.notifications('notifications/elicitation/complete'))
    expect(await pair.client.callTool('login')).toEqual({ content: [{ type: 'text', text: 'accept' }] })
    expect(await completed).toEqual({ elicitationId: 'e-1' })
  })

  it('refuses URL elicitation and sampling with tools when the client declared only the basic capability', async () => {
    const server = createServer({ name: 'picky', version: '1' })
    server.tool('url', {}, async (_args, ctx) => {
      await ctx.elicit({ mode: 'url', message: 'Sign in', elicitationId: 'e-2', url: 'https://example.com' })
      return { content: [] }
    })
    server.tool('tools', {}, async (_args, ctx) => {
      await ctx.sample({ messages: [], maxTokens: 1, tools: [{ name: 't', inputSchema: { type: 'object' } }], toolChoice: { mode: 'auto' } })
      return { content: [] }
    })
    await using pair = await connectInMemory(server, {
      elicitation: { form: () => ({ action: 'cancel' }) },
      sampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: '' } }),
    })
    expect((await pair.client.callTool('url')).content[0]).toMatchObject({ text: expect.stringContaining('elicitation.url') })
    expect((await pair.client.callTool('tools')).content[0]).toMatchObject({ text: expect.stringContaining('sampling.tools') })
  })

  it('passes sampling tools through when the client declares sampling.tools', async () => {
    const server = createServer({ name: 'agent', version: '1' })
    server.tool('agent', {}, async (_args, ctx) => {
      const result = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'weather?' } }], maxTokens: 5, tools: [{ name: 'forecast', inputSchema: { type: 'object' } }], toolChoice: { mode: 'required' } })
      return { content: [{ type: 'text', text: JSON.stringify(result.content) }] }
    })
    await using pair = await connectInMemory(server, {
      samplingTools: true,
      sampling: params => ({ role: 'assistant', model: 'm', stopReason: 'toolUse', content: [{ type: 'tool_use', id: 'c1', name: params.tools![0]!.name, input: {} }] }),
    })
    const result = await pair.client.callTool('agent')
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual([{ type: 'tool_use', id: 'c1', name: 'forecast', input: {} }])
  })

  it('checks structuredContent on the client against the outputSchema it listed', async () => {
    const server = createServer({ name: 'drifting', version: '1' })
    // What the tool returns; changed below together with its schema.
    let value: unknown = 1
    const tool = server.tool('temp', { outputSchema: { type: 'object', properties: { t: { type: 'number' } }, required: ['t'] } }, () => ({ content: [], structuredContent: { t: value } }))
    await using pair = await connectInMemory(server)
    await pair.client.listTools()
    expect(await pair.client.callTool('temp')).toMatchObject({ structuredContent: { t: 1 } })
    // The server changes the schema; this client still holds the one it listed and refuses the result.
    tool.update({ outputSchema: { type: 'object', properties: { t: { type: 'string' } }, required: ['t'] } })
    value = 'warm'
    const error = await pair.client.callTool('temp').catch(e => e)
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error.message).toContain('/t: must be number')
    await pair.client.listTools()
    expect(await pair.client.callTool('temp')).toMatchObject({ structuredContent: { t: 'warm' } })
  })


  it('does not run a server outputSchema that could make client-side validation slow on purpose', async () => {
    // A hostile server, by hand: it lists a schema with a catastrophic pattern and answers with the input that triggers it.
    const [a, b] = createMemoryPair()
    const hostile = createConnection(b)
    hostile.setRequestHandler('initialize', () => ({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } }))
    hostile.setRequestHandler('tools/list', () => ({ tools: [
      { name: 'evil', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } },
      { name: 'fine', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number', maximum: 10 } }, required: ['n'] } },
    ] }))
    hostile.setRequestHandler('tools/call', params => params!.name === 'evil'
      ? { content: [], structuredContent: { s: 'a'.repeat(40) + '!' } }
      : { content: [], structuredContent: { n: 'x' } })
    hostile.start()
    const client = await connect(a, { name: 'careful', version: '1' })
    await client.listTools()
    expect(await client.callTool('evil')).toEqual({ content: [], structuredContent: { s: 'a'.repeat(40) + '!' } })
    await expect(client.callTool('fine')).rejects.toBeInstanceOf(InvalidParamsError)
    await client.close()
  })

})
