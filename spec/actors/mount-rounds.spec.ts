import { describe, expect, it } from 'vitest'
import { VirtualTimeScheduler, filter, firstValueFrom, lastValueFrom } from 'rxjs'
import { createServer, proxy, proxyClientOptions, type McpServer, type ProxyOptions } from '../../actors/server.ts'
import { connect, type ClientOptions } from '../../actors/client.ts'
import { connectInMemory, createMemoryPair } from '../../testing.ts'

/**
 * A server whose `ask` tool does something before asking (counted in `runs`), then asks its caller
 * a form elicitation, a URL elicitation, a sampling and the roots, one after another, and says
 * what it got; `aborted` resolves when a run's signal aborts.
 */
function countingBackend() {
  const server = createServer({ name: 'counting', version: '1.0.0' })
  const state = { runs: 0 }
  let markAborted!: () => void
  const aborted = new Promise<void>(resolve => { markAborted = resolve })
  server.tool('ask', {}, async (_args, ctx) => {
    state.runs++
    ctx.signal.addEventListener('abort', () => markAborted())
    const form = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    const url = await ctx.elicit({ mode: 'url', message: 'Sign in', url: 'https://example.com/sign-in', elicitationId: 'e-1' })
    const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 })
    const roots = await ctx.listRoots()
    return { content: [{ type: 'text', text: JSON.stringify({ form: form.content, url: url.action, sampled: sampled.content, roots: roots.roots.map(root => root.uri) }) }] }
  })
  server.tool('shout', {}, (_args, ctx) => { ctx.log('warning', 'shouting', 'voice'); return { content: [{ type: 'text', text: 'ok' }] } })
  return { server, state, aborted }
}

/** `server` mounted as `b` in a new parent: in-process, or through a proxied legacy client. */
async function mounted(server: McpServer, source: 'in-process' | 'legacy client', options: ProxyOptions = {}): Promise<McpServer> {
  const parent = createServer({ name: 'parent', version: '1.0.0' })
  const changed = firstValueFrom(parent.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'tools')))
  if (source === 'in-process') parent.mount('b', server)
  else {
    const [clientSide, serverSide] = createMemoryPair()
    await server.listen(serverSide)
    const downstream = await connect(clientSide, { name: 'proxy', version: '1' }, { era: 'legacy', ...proxyClientOptions() })
    parent.mount('b', proxy(downstream, { closeClient: true, ...options }))
  }
  await changed
  return parent
}

/** A modern caller that answers everything; `gate`, when given, holds its form answer until it resolves. */
function modernCaller(gate?: Promise<void>): ClientOptions {
  return {
    era: 'modern',
    elicitation: { form: async () => { await gate; return { action: 'accept', content: { name: 'Ann' } } }, url: () => ({ action: 'accept' }) },
    sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'caller' }, model: 'm' }),
    roots: [{ uri: 'file:///caller', name: 'caller' }],
  }
}

const EXPECTED = { form: { name: 'Ann' }, url: 'accept', sampled: { type: 'text', text: 'caller' }, roots: ['file:///caller'] }
const parsed = (result: { content: unknown[] }) => JSON.parse((result.content[0] as { text: string }).text) as unknown

describe('proxy: a modern caller\'s rounds', () => {
  it('runs a legacy source\'s call once across the caller\'s four input rounds', async () => {
    const { server, state } = countingBackend()
    const parent = await mounted(server, 'legacy client')
    let rounds = 0
    parent.use(next => (request, ctx) => { if (request.method === 'tools/call') rounds++; return next(request, ctx) })
    await using pair = await connectInMemory(parent, modernCaller())
    expect(parsed(await pair.client.callTool('b__ask', {}))).toEqual(EXPECTED)
    expect(rounds).toBe(5)
    expect(state.runs).toBe(1)
  })

  it('forwards each round anew with holdCalls: false (the source repeats what it did before asking)', async () => {
    const { server, state } = countingBackend()
    const parent = await mounted(server, 'legacy client', { holdCalls: false })
    await using pair = await connectInMemory(parent, modernCaller())
    expect(parsed(await pair.client.callTool('b__ask', {}))).toEqual(EXPECTED)
    expect(state.runs).toBe(5)
  })

  it('cancels a held call downstream once its time is up, and a late retry runs the call anew with the answers it brings', async () => {
    const { server, state, aborted } = countingBackend()
    const scheduler = new VirtualTimeScheduler()
    const parent = await mounted(server, 'legacy client', { holdCalls: { ttlMs: 1000 }, scheduler })
    let release!: () => void
    const gate = new Promise<void>(resolve => { release = resolve })
    let asked!: () => void
    const isAsked = new Promise<void>(resolve => { asked = resolve })
    const options = modernCaller(gate)
    const form = options.elicitation!.form!
    options.elicitation!.form = (params, ctx) => { asked(); return form(params, ctx) }
    await using pair = await connectInMemory(parent, options)
    const call = pair.client.callTool('b__ask', {})
    // The caller holds the first round's input_required: the call waits, parked, until its time is up.
    await isAsked
    scheduler.flush()
    await aborted
    release()
    expect(parsed(await call)).toEqual(EXPECTED)
    expect(state.runs).toBe(2)
  })

  it('gives up a held call downstream when the proxy closes', async () => {
    const { server, aborted } = countingBackend()
    const [clientSide, serverSide] = createMemoryPair()
    await server.listen(serverSide)
    const downstream = await connect(clientSide, { name: 'proxy', version: '1' }, { era: 'legacy', ...proxyClientOptions() })
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = firstValueFrom(parent.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'tools')))
    const mount = parent.mount('b', proxy(downstream, { closeClient: true }))
    await changed
    let asked!: () => void
    const isAsked = new Promise<void>(resolve => { asked = resolve })
    await using pair = await connectInMemory(parent, { ...modernCaller(new Promise(() => {})), elicitation: { form: () => { asked(); return new Promise(() => {}) } } })
    void pair.client.callTool('b__ask', {}).catch(() => {})
    await isAsked
    mount.remove()
    await aborted
  })
})

describe.each(['in-process', 'legacy client'] as const)('proxy: log messages about a forwarded call (%s source)', source => {
  it('go to the modern caller that made it, at its level, and to no legacy session', async () => {
    const { server } = countingBackend()
    const parent = await mounted(server, source)
    await using caller = await connectInMemory(parent, { era: 'modern' })
    await using other = await connectInMemory(parent)
    await other.client.setLoggingLevel('debug')
    const otherHeard: unknown[] = []
    other.client.notifications('notifications/message').subscribe(params => otherHeard.push(params))
    await caller.client.setLoggingLevel('info')
    const heard = firstValueFrom(caller.client.notifications('notifications/message'))
    await caller.client.callTool('b__shout', {})
    expect(await heard).toEqual(expect.objectContaining({ level: 'warning', logger: 'b/voice', data: 'shouting' }))
    await other.client.ping()
    expect(otherHeard).toEqual([])
  })

  it('go to the legacy caller that made it only', async () => {
    const { server } = countingBackend()
    const parent = await mounted(server, source)
    await using caller = await connectInMemory(parent)
    await using other = await connectInMemory(parent)
    await caller.client.setLoggingLevel('debug')
    await other.client.setLoggingLevel('debug')
    const otherHeard: unknown[] = []
    other.client.notifications('notifications/message').subscribe(params => otherHeard.push(params))
    const heard = firstValueFrom(caller.client.notifications('notifications/message'))
    await caller.client.callTool('b__shout', {})
    expect(await heard).toEqual({ level: 'warning', logger: 'b/voice', data: 'shouting' })
    await other.client.ping()
    expect(otherHeard).toEqual([])
  })
})

describe('proxy: answers a modern caller sends ahead of any round', () => {
  it.each(['in-process', 'legacy client'] as const)('are taken by key as the source asks (%s source): one round', async source => {
    const server = createServer({ name: 'once', version: '1.0.0' })
    server.tool('name', {}, async (_args, ctx) => {
      const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
      return { content: [{ type: 'text', text: String(answer.content?.name) }] }
    })
    const parent = await mounted(server, source)
    let rounds = 0
    parent.use(next => (request, ctx) => { if (request.method === 'tools/call') rounds++; return next(request, ctx) })
    await using pair = await connectInMemory(parent, { era: 'modern', elicitation: { form: () => ({ action: 'accept', content: { name: 'late' } }) } })
    const result = await lastValueFrom(pair.client.request<{ content: unknown[] }>('tools/call', {
      name: 'b__name', arguments: {}, inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'ahead' } } },
    }).pipe(filter(event => event.type === 'result')))
    expect((result as { result: { content: unknown[] } }).result.content).toEqual([{ type: 'text', text: 'ahead' }])
    expect(rounds).toBe(1)
  })
})
